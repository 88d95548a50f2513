// A real tcpdump capture of `relay-lab run` on the loopback interface (in a
// network namespace of its own, so other traffic on the machine stays out)
// imported and compared unit for unit with the run's own trace; then the
// same capture rewritten: segments reordered and retransmitted (nothing
// lost), a segment dropped (a named gap), and the capture cut mid-stream.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MUX_HEADER_LEN } from '@shared/wire/constants';
import { saltFromHex } from '@shared/wire/salt';
import { nodeMac } from '../crypto/node-mac';
import { loadTraceFile } from '../lab/trace/ndjson';
import type { RecordEvent } from '../lab/trace/format';
import { importCapture, type ImportResult } from './import-capture';

const SALT = '7e57ca97000000000000000000000001';
const root = path.resolve(__dirname, '..', '..');
const bin = path.join(root, 'bin', 'relay-lab.mjs');
const REQUIRED = process.env.CI === 'true';

function has(cmd: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
}

/** tcpdump needs root (or capabilities) and unshare a user allowed to make a network namespace. */
function captureUnavailable(): string | null {
  if (!has('tcpdump')) return 'tcpdump is not installed';
  if (!has('unshare') || !has('ip')) return 'unshare/ip (util-linux, iproute2) are not installed';
  if (process.getuid?.() !== 0) return 'not root: tcpdump on lo is not permitted';
  const probe = spawnSync('unshare', ['-n', 'true']);
  if (probe.status !== 0) return `unshare -n is not permitted here: ${probe.stderr.toString().trim()}`;
  return null;
}

interface Captured {
  dir: string;
  pcap: string;
  trace: string;
}

function captureRun(): Captured {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-capture-'));
  fs.chmodSync(dir, 0o777); // tcpdump drops privileges to its own user before writing
  const pcap = path.join(dir, 'run.pcap');
  const trace = path.join(dir, 'run.trace.ndjson');
  const script = [
    'ip link set lo up',
    `tcpdump -i lo -U -s 0 -w ${pcap} tcp 2>${dir}/tcpdump.err & TD=$!`,
    // tcpdump prints "listening on" once its capture is open.
    `for i in $(seq 100); do grep -q listening ${dir}/tcpdump.err && break; sleep 0.1; done`,
    `"${process.execPath}" ${bin} run --hosts 2 --ranks-per-host 2 --rounds 3 --model-bytes 64KiB --salt ${SALT} --trace ${trace}`,
    'RC=$?',
    'sleep 0.5',
    'kill -INT $TD; wait $TD',
    'exit $RC',
  ].join('\n');
  const r = spawnSync('unshare', ['-n', 'sh', '-c', script], { cwd: root, timeout: 120_000 });
  if (r.status !== 0) throw new Error(`capture run failed (${r.status}): ${r.stderr.toString()}`);
  return { dir, pcap, trace };
}

/** Per connection (by ports) and direction: layer/kind/length/verdict of each unit. */
function unitsByStream(r: ImportResult): Map<string, string[]> {
  const m = new Map<string, string[]>();
  for (const s of r.streams)
    for (const u of s.units) {
      const port = `${s.conn.client.port}>${s.conn.server.port} ${u.dir}`;
      m.set(port, [...(m.get(port) ?? []), `${u.layer}/${u.kind}/${u.length}/${u.verdict}`]);
    }
  return m;
}

// Classic pcap (tcpdump's default) of Ethernet frames: enough to rewrite it.
interface PcapRecord {
  header: Buffer;
  data: Buffer;
  flow: string;
  /** The TCP sequence number of the segment's first payload byte. */
  seq: number;
  payloadLen: number;
}

function readPcapRecords(file: Buffer): { head: Buffer; records: PcapRecord[] } {
  expect(file.readUInt32LE(0)).toBe(0xa1b2c3d4);
  expect(file.readUInt32LE(20)).toBe(1); // LINKTYPE_ETHERNET on Linux lo
  const records: PcapRecord[] = [];
  for (let at = 24; at + 16 <= file.length;) {
    const cap = file.readUInt32LE(at + 8);
    const data = file.subarray(at + 16, at + 16 + cap);
    const ip = data.subarray(14);
    const ihl = (ip[0] & 15) * 4;
    const tcpLen = (ip[ihl + 12] >> 4) * 4;
    records.push({
      header: file.subarray(at, at + 16),
      data,
      flow: `${ip.readUInt16BE(ihl)}>${ip.readUInt16BE(ihl + 2)}`,
      seq: ip.readUInt32BE(ihl + 4),
      payloadLen: ip.readUInt16BE(2) - ihl - tcpLen,
    });
    at += 16 + cap;
  }
  return { head: file.subarray(0, 24), records };
}

const writePcap = (head: Buffer, records: PcapRecord[]) =>
  Buffer.concat([head, ...records.flatMap((r) => [r.header, r.data])]);

const mac = nodeMac(saltFromHex(SALT));
const unavailable = captureUnavailable();

describe('importing a tcpdump capture of relay-lab run', () => {
  if (unavailable) {
    it.skip(`tcpdump capture tests skipped: ${unavailable}`, () => {});
    if (REQUIRED) it('CI requires the tcpdump capture tests', () => expect.fail(unavailable));
    return;
  }

  it(
    'decodes unit for unit like the run, survives reordering, names lost and missing bytes as gaps',
    { timeout: 180_000 },
    async () => {
      const cap = captureRun();
      try {
        const file = fs.readFileSync(cap.pcap);
        const imported = importCapture(file, { mac });
        // 2 hosts x 2 ranks: 8 rank loopback legs and 4 uplinks, nothing else in the namespace.
        expect(imported.streams.length).toBe(12);
        expect(imported.ranksPerHost).toEqual([2, 2]);

        // 1. Unit for unit like the run's own trace, per link and direction.
        const run = await loadTraceFile(cap.trace);
        const key = (r: RecordEvent['record']) =>
          `${r.layer}/${r.kind}/${r.length}/${r.verdict}/${r.rank ?? ''}`;
        const runBy = new Map<string, string[]>();
        for (const e of run.events)
          if (e.type === 'record')
            runBy.set(`${e.record.link} ${e.record.dir}`, [
              ...(runBy.get(`${e.record.link} ${e.record.dir}`) ?? []),
              key(e.record),
            ]);
        const impBy = new Map<string, string[]>();
        for (const s of imported.streams)
          for (const u of s.units) {
            const rank = u.layer === 'handshake' ? undefined : (u.rank ?? s.link.rank);
            const k = `${s.link.id} ${u.dir}`;
            impBy.set(k, [
              ...(impBy.get(k) ?? []),
              `${u.layer}/${u.kind}/${u.length}/${u.verdict}/${rank ?? ''}`,
            ]);
          }
        // Teardown's last DeclareDead records can be queued on an uplink that is already closing: the
        // run's tap records them, the wire (and so the capture) may never carry them. Only such a tail may differ.
        for (const [k, run] of runBy) {
          const imp = impBy.get(k) ?? [];
          const tail = run.slice(imp.length);
          if (imp.length < run.length && tail.every((u) => u.startsWith('mux/DeclareDead/')))
            runBy.set(k, run.slice(0, imp.length));
        }
        expect(Object.fromEntries([...impBy].sort())).toEqual(Object.fromEntries([...runBy].sort()));
        expect([...runBy.values()].flat().length).toBeGreaterThan(150);

        // The CLI writes a trace that `trace info` opens.
        const out = path.join(cap.dir, 'imported.trace.ndjson');
        const cli = spawnSync(
          process.execPath,
          [bin, 'import', cap.pcap, '--salt', SALT, '--trace', out, '--json'],
          { cwd: root },
        );
        expect(cli.status, cli.stderr.toString()).toBe(0);
        expect(JSON.parse(cli.stdout.toString()).flodlStreams).toBe(12);
        const info = spawnSync(process.execPath, [bin, 'trace', 'info', out, '--json'], { cwd: root });
        expect(info.status, info.stderr.toString()).toBe(0);
        expect(JSON.parse(info.stdout.toString()).events.record).toBe([...runBy.values()].flat().length);

        const original = unitsByStream(imported);
        const { head, records } = readPcapRecords(file);
        const dataIdx = records.map((r, i) => (r.payloadLen > 0 ? i : -1)).filter((i) => i >= 0);

        // 2. Every pair of consecutive data segments of a flow swapped, every 4th one sent twice: the same units.
        const shuffled = [...records];
        const lastOfFlow = new Map<string, number>();
        for (const i of dataIdx) {
          const prev = lastOfFlow.get(records[i].flow);
          if (prev !== undefined) {
            [shuffled[prev], shuffled[i]] = [shuffled[i], shuffled[prev]];
            lastOfFlow.delete(records[i].flow);
          } else lastOfFlow.set(records[i].flow, i);
        }
        const withRetransmits = shuffled.flatMap((r, i) => (r.payloadLen > 0 && i % 4 === 0 ? [r, r] : [r]));
        expect(unitsByStream(importCapture(writePcap(head, withRetransmits), { mac }))).toEqual(original);

        // 3. A segment of a HostFrame lost: a gap of its length, that frame cut, everything else intact.
        const hostFrames = imported.streams.find((s) => s.link.id === 'h0.uplink.data')!;
        const upFlow = `${hostFrames.conn.client.port}>${hostFrames.conn.server.port}`;
        const upSegs = dataIdx.filter((i) => records[i].flow === upFlow);
        // The segment lost starts inside a HostFrame, after its whole mux header (so the decoder knows the
        // unit it cuts; how a record is cut into segments depends on how it was written and on load). Offsets
        // come from sequence numbers, and no other segment may carry its bytes: a loaded machine's capture
        // can hold real retransmissions, and dropping one copy of bytes sent twice loses nothing.
        let unitAt = 0;
        const spans = hostFrames.units
          .filter((u) => u.dir === 'up')
          .map((u) => ({ kind: u.kind, from: unitAt, to: (unitAt += u.length) }));
        // The flow's first data segment carries its first byte; `>>> 0` keeps offsets right across a 32-bit wrap.
        const firstSeq = records[upSegs[0]].seq;
        const offsetOf = (i: number) => (records[i].seq - firstSeq) >>> 0;
        const carriedElsewhere = (i: number) =>
          upSegs.some(
            (j) =>
              j !== i &&
              offsetOf(j) < offsetOf(i) + records[i].payloadLen &&
              offsetOf(i) < offsetOf(j) + records[j].payloadLen,
          );
        const lost = upSegs.find((i) => {
          const from = offsetOf(i);
          return (
            !carriedElsewhere(i) &&
            spans.some((x) => x.kind === 'HostFrame' && from >= x.from + MUX_HEADER_LEN && from < x.to)
          );
        })!;
        expect(lost).toBeDefined();
        const lossy = importCapture(
          writePcap(
            head,
            records.filter((_, i) => i !== lost),
          ),
          { mac },
        );
        const lossyUnits = lossy.streams.find((s) => s.link.id === 'h0.uplink.data')!.units;
        const gaps = lossyUnits.filter((u) => u.verdict === 'gap' && u.kind === 'gap');
        expect(gaps.map((g) => [g.dir, g.length])).toEqual([['up', records[lost].payloadLen]]);
        expect(lossyUnits.some((u) => u.kind === 'HostFrame' && u.code === 'TRUNCATED')).toBe(true);
        const lossyBy = unitsByStream(lossy);
        for (const [k, v] of original) if (!k.startsWith(upFlow)) expect(lossyBy.get(k), k).toEqual(v);
        // After the gap the stream resynchronises: its last units are the original's.
        const tail = original.get(`${upFlow} up`)!.slice(-2);
        expect(lossyBy.get(`${upFlow} up`)!.slice(-2)).toEqual(tail);

        // 4. The capture cut in mid-stream (its first half gone): each stream starts with a named gap,
        // then decodes the original's remaining units.
        const cut = importCapture(
          writePcap(head, records.slice(upSegs.length ? upSegs[Math.floor(upSegs.length / 2)] : 0)),
          { mac },
        );
        const cutUp = cut.streams.find((s) => s.conn.client.port === hostFrames.conn.client.port)!;
        expect(cutUp.conn.midStream).toBe(true);
        expect(cutUp.units[0].verdict).toBe('gap');
        expect(cutUp.units[0].message).toMatch(/starts mid-stream/);
        const cutUnits = unitsByStream(cut)
          .get(`${upFlow} up`)!
          .filter((u) => !u.includes('/gap'));
        const orig = original.get(`${upFlow} up`)!;
        expect(cutUnits.length).toBeGreaterThan(0);
        expect(cutUnits).toEqual(orig.slice(orig.length - cutUnits.length));
      } finally {
        fs.rmSync(cap.dir, { recursive: true, force: true });
      }
    },
  );
});
