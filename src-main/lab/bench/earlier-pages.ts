// "Show earlier" read back from a session's recording: the time of a page of
// the records list (2,000 units) from the record index (heads only), against
// reading the same page's lines whole and decoding them (the index's read
// path before it skipped the captured bytes), for recordings of N units. A
// page should cost the same whatever N: the figures for the session's first
// page at two sizes of session show it. Units are shaped as the default session's:
// one in four a model-sized unit cut to a 64 KiB capture (RoundFrame,
// HostFrame, Broadcast), the rest control and data units of tens of bytes,
// with a round report and link counters between rounds.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { UnitRecord } from '@shared/lab/records';
import { DEFAULT_TOPOLOGY } from '@shared/lab/topology';
import { makeTraceHeader, TraceWriter } from '../trace/ndjson';
import { decodeEventLine } from '../trace/ndjson-codec';
import { TraceRecorder } from '../trace/recorder';
import { RecordIndex } from '../trace/record-index';
import { median } from './stages';

export interface EarlierPagesOptions {
  /** Sessions' sizes in units (default 5,000 and 20,000). */
  units?: number[];
  /** Units per page (default 2,000, as the window asks). */
  pageUnits?: number;
  /** Bytes kept of a model-sized unit (default 64 KiB, the default snap length). */
  capturedBytes?: number;
  log?: (m: string) => void;
}

const UNITS_PER_ROUND = 40;

function unitOf(seq: number, captured: number): [UnitRecord, Uint8Array] {
  const big = seq % 4 === 1;
  const bytes = new Uint8Array(big ? captured : 30 + (seq % 50)).fill(seq & 0xff);
  const record: UnitRecord = {
    seq,
    t: seq * 0.5,
    link: `h${seq % 2}.uplink.data`,
    dir: seq % 3 ? 'up' : 'down',
    layer: 'mux',
    kind: big ? 'RoundFrame' : 'Data',
    length: big ? 4 * 1024 * 1024 : bytes.length,
    captured: bytes.length,
    verdict: 'ok',
    summary: big
      ? `round ${Math.floor(seq / UNITS_PER_ROUND)}, 4 MiB of f32`
      : `stream ${seq % 8}, ${bytes.length} B`,
  };
  return [record, bytes];
}

/** Writes a recording of `units` units; returns its index and each unit's line offset. */
async function writeRecording(file: string, units: number, captured: number) {
  const header = makeTraceHeader({
    startedAt: Date.now(),
    saltHex: '00'.repeat(16),
    config: DEFAULT_TOPOLOGY,
    links: [],
    producer: 'relay-lab bench',
    snapLen: captured,
  });
  const writer = new TraceWriter(fs.createWriteStream(file), header);
  const index = new RecordIndex(file);
  index.attachWriter(writer);
  const rec = new TraceRecorder(writer, () => 0, { index });
  const starts = new Float64Array(units + 1);
  for (let seq = 0; seq < units; seq++) {
    starts[seq] = writer.bytesWritten;
    rec.record(...unitOf(seq, captured));
    if (seq % UNITS_PER_ROUND === UNITS_PER_ROUND - 1) {
      rec.labEvent({ type: 'log', level: 'info', message: `round ${seq / UNITS_PER_ROUND} done` });
      rec.labEvent({ type: 'links', links: [] });
    }
    // The file's stream keeps what it has not written yet: wait for it now and then, as a session's disk would.
    if (seq % 64 === 63) await writer.drained();
  }
  starts[units] = writer.bytesWritten;
  await writer.flushed();
  return { rec, index, starts };
}

/** The page [from, to) as the index read it before: every line read and decoded whole, bytes and all. */
async function wholeLinesPage(file: string, start: number, end: number): Promise<UnitRecord[]> {
  const fh = await fs.promises.open(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(end - start);
    await fh.read(buf, 0, buf.length, start);
    const out: UnitRecord[] = [];
    for (let pos = 0; pos < buf.length;) {
      const nl = buf.indexOf(0x0a, pos);
      const e = decodeEventLine(buf.toString('utf8', pos, nl), 0);
      if (e.type === 'record') out.push(e.record);
      pos = nl + 1;
    }
    return out;
  } finally {
    await fh.close();
  }
}

/**
 * The best of `repeats` runs of f (other processes share this machine): its wall time, the
 * process's CPU time in it (every thread's, the reads' included), and its value.
 */
async function timed<T>(f: () => Promise<T>, repeats = 3): Promise<{ ms: number; cpuMs: number; value: T }> {
  let best: { ms: number; cpuMs: number; value: T } | undefined;
  for (let i = 0; i < repeats; i++) {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const value = await f();
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    if (!best || ms < best.ms) best = { ms, cpuMs: (cpu.user + cpu.system) / 1000, value };
  }
  return best!;
}

/** Show earlier from the newest unit back to the first, a page at a time, as the window pages. */
async function pageBack(index: RecordIndex, units: number, pageUnits: number) {
  const pages: { from: number; ms: number; cpuMs: number; bytes: number }[] = [];
  for (let before = units; before > 0; before -= pageUnits) {
    const from = Math.max(0, before - pageUnits);
    const read0 = index.bytesRead;
    const first = await timed(() => index.records(from, before - from), 1);
    const bytes = index.bytesRead - read0;
    if (first.value.length !== before - from)
      throw new Error(`page [${from}, ${before}) read ${first.value.length} units`);
    const again = await timed(() => index.records(from, before - from));
    pages.push({ from, bytes, ...(again.ms < first.ms ? again : first) });
  }
  return pages;
}

export async function benchEarlierPages(o: EarlierPagesOptions = {}) {
  const pageUnits = o.pageUnits ?? 2000;
  const captured = o.capturedBytes ?? 64 * 1024;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-bench-pages-'));
  const sessions = [];
  try {
    for (const units of o.units ?? [5000, 20_000]) {
      o.log?.(`earlier pages: writing a recording of ${units} units`);
      const file = path.join(dir, `session-${units}.trace.ndjson`);
      const { rec, index, starts } = await writeRecording(file, units, captured);
      const pages = await pageBack(index, units, pageUnits);
      // The session's first page, whole in every session: what it costs should not grow with the session.
      const firstPage = await timed(() => index.records(0, pageUnits));
      // Three of the same pages read and decoded whole: the newest, the middle, the oldest.
      const whole = [];
      for (const from of [units - pageUnits, Math.floor(units / 2), 0].map((f) => Math.max(0, f))) {
        const to = Math.min(units, from + pageUnits);
        whole.push(await timed(() => wholeLinesPage(file, starts[from]!, starts[to]!)));
      }
      const unitMs: number[] = [];
      for (const seq of [0, 1, 2, units >> 1, units - 1]) {
        const { ms, value } = await timed(() => index.read(seq));
        if (value?.record.seq !== seq) throw new Error(`unit ${seq} not read back`);
        unitMs.push(ms);
      }
      await rec.close();
      const pageMs = median(pages.map((p) => p.ms));
      const wholeMs = median(whole.map((w) => w.ms));
      sessions.push({
        units,
        fileMiB: fs.statSync(file).size / 1024 ** 2,
        indexEntries: index.entries,
        pages: pages.length,
        pageMsMedian: pageMs,
        pageCpuMsMedian: median(pages.map((p) => p.cpuMs)),
        firstPageMs: firstPage.ms,
        pageKiBMedian: median(pages.map((p) => p.bytes)) / 1024,
        wholeLinesPageMsMedian: wholeMs,
        wholeLinesPageCpuMsMedian: median(whole.map((w) => w.cpuMs)),
        wholeLinesPageMiB: (starts[Math.min(units, pageUnits)]! - starts[0]!) / 1024 ** 2,
        wholeOverHeads: wholeMs / pageMs,
        unitBytesMsMedian: median(unitMs),
      });
      fs.rmSync(file, { force: true });
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const [small, large] = [sessions[0], sessions.at(-1)];
  return {
    pageUnits,
    sessions,
    /** The first page of the largest session over that of the smallest: about 1 when a page's cost is the page's. */
    firstPageLargeOverSmall: small && large ? large.firstPageMs / small.firstPageMs : NaN,
  };
}
