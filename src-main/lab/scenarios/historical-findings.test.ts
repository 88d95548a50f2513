// Every reproduction's historical run, recorded as the window records it,
// reads as the incident when opened: at least one finding points at a unit of
// the trace, that unit carries the verdict the scenario's narrative describes,
// and it is the run's decisive unit (the picture's). The mid-frame desync's
// trace read "0 findings" with its decisive unit "ok": the side decoder saw
// every record whole on the wire, as it was; what the NaiveReader made of it
// (the payload read as a header, BAD_MAGIC) was nowhere.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { UnitRecord } from '@shared/lab/records';
import { loadTraceFile } from '../trace/ndjson';
import { TraceReplay } from '../trace/replay';
import { pictureOfEvents } from '../../repro/run-picture';
import { findScenario } from './registry';
import { runScenario } from './run-scenario';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-historical-findings-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Each scenario, the verdict of its historical decisive unit, and what its kind is. */
const TABLE: [name: string, verdict: UnitRecord['verdict'], kind: RegExp][] = [
  // The payload read as a header after the timeout dropped the real one.
  ['mid-frame-desync', 'BAD_MAGIC', /skipped/],
  // Two writers' bytes interleaved: a record whose MAC does not verify.
  ['two-writers', 'HMAC_MISMATCH', /HostFrame/],
  // The stalled round's unit (no DeclareDead forwarded: the fold barrier still waits); ok on the wire.
  ['wedged-rank', 'ok', /RoundFrame|DeclareDead/],
  // The header declaring 0xFFFFFFFF: rejected by the ceiling (the trusting reader allocated).
  ['hostile-length', 'OVER_CEILING', /skipped/],
  // The producer never waited: every Data record whole, the queue behind them grew.
  ['slow-uplink', 'ok', /Data/],
  // The replayed Shutdown, relabelled Heartbeat: accepted by the v1 MAC, which is the bug.
  ['control-replay', 'ok', /ControlFrame/],
  // The consensus carrying NaN: whole on the wire, wrong in its numbers.
  ['idle-nan', 'ok', /Broadcast/],
  // The scatter h1 died under.
  ['broken-host', 'ok', /Broadcast/],
  // The consensus ending the slowest round: a timing incident, every unit ok.
  ['nagle', 'ok', /Broadcast/],
  // The per-rank Data a flodl 0.7 data channel refuses (a stale relay build's).
  ['stale-relay', 'BAD_PAYLOAD', /Data/],
  // The frame the stopped peer began and never finished.
  ['vanished-peer', 'TRUNCATED', /RoundFrame/],
];

describe('historical traces of the reproductions', () => {
  it.each(TABLE)(
    '%s: a finding points at the decisive unit, whose verdict is %s',
    async (name, verdict, kind) => {
      const s = findScenario(name)!;
      const file = (side: string) => path.join(dir, `${name}-${side}.trace.ndjson`);
      const result = await runScenario(s, undefined, undefined, { traceFile: file });
      expect(result.verdict, result.error).toBe('ok');
      const trace = await loadTraceFile(file('historical'));
      expect(trace.complete).toBe(true);
      const records = new Map(
        trace.events.flatMap((e) => (e.type === 'record' ? [[e.record.seq, e.record] as const] : [])),
      );
      const findings = trace.events.flatMap((e) =>
        e.type === 'finding' && e.finding.recordSeq !== undefined && e.finding.severity === 'error'
          ? [e.finding]
          : [],
      );
      const decisive = pictureOfEvents(trace.events).decisive!;
      const at = findings.find((f) => f.recordSeq === decisive.seq);
      const unit = records.get(decisive.seq);
      console.log(`${name}: #${decisive.seq} ${unit?.kind} ${unit?.verdict}: ${at?.message}`);
      expect(at, `no finding at the decisive unit #${decisive.seq}`).toBeDefined();
      expect(unit).toBeDefined();
      expect(unit!.verdict).toBe(verdict);
      expect(unit!.kind).toMatch(kind);
      // finding ▶ from where a trace opens (its end) selects a finding's unit, one of the trace's.
      const replay = new TraceReplay(trace);
      replay.seek(replay.duration);
      const seen: number[] = [];
      for (let i = 0; i < findings.length + trace.events.length; i++) {
        const step = replay.stepTarget('finding', 1);
        if (!step || step.seq === undefined) continue;
        replay.seek(step.t);
        if (seen.includes(step.seq)) break;
        seen.push(step.seq);
      }
      expect(seen).toContain(decisive.seq);
    },
    120_000,
  );
});
