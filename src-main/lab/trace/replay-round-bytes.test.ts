// A trace saved before round reports carried their bytes replays with the
// same per-round figures the engine now reports: counted from the trace's
// units, each in its round (issue 30 #3, "at every ... mode" includes the
// trace view). A round the trace holds only part of keeps no figure.
import { describe, expect, it } from 'vitest';
import { PassThrough } from 'node:stream';
import type { RoundReport } from '@shared/lab/records';
import { TopologySession } from '../topology-session';
import { loadTrace } from './ndjson';
import { recordSession } from './session-recording';
import { TraceReplay } from './replay';

describe('replayed round reports carry their per-round bytes', () => {
  it('a trace without them (older) gets the same figures from its units', { timeout: 60_000 }, async () => {
    const session = new TopologySession({});
    await session.start({ ranksPerHost: [2, 1], modelBytes: 16 * 1024, rounds: 3, roundIntervalMs: 20 });
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (b: Buffer) => chunks.push(b));
    const recorder = recordSession(session, out, { producer: 'relay-lab test' });
    try {
      await session.finished();
    } finally {
      await session.stop();
      await recorder.close();
    }
    const trace = await loadTrace(chunks);
    const written: RoundReport[] = [];
    for (const e of trace.events)
      if (e.type === 'round') {
        written.push(structuredClone(e.report));
        delete e.report.dataUpBytesPerHost;
        delete e.report.rankDataUpBytes;
      }
    expect(written.length).toBe(3);
    expect(written.every((r) => r.dataUpBytesPerHost && r.rankDataUpBytes)).toBe(true);
    const replay = new TraceReplay(trace);
    const rounds = replay
      .labEventsUntil(replay.duration)
      .flatMap((e) => (e.type === 'round' ? [e.report] : []));
    expect(rounds.map((r) => [r.dataUpBytesPerHost, r.rankDataUpBytes])).toEqual(
      written.map((r) => [r.dataUpBytesPerHost, r.rankDataUpBytes]),
    );

    // The trace begins after round 0's HostFrames: round 0 keeps no figure, the rest do.
    const firstFrame = trace.events.findIndex((e) => e.type === 'record' && e.record.kind === 'HostFrame');
    trace.events.splice(firstFrame, 1);
    const cut = new TraceReplay(trace);
    const cutRounds = cut.labEventsUntil(cut.duration).flatMap((e) => (e.type === 'round' ? [e.report] : []));
    expect(cutRounds[0].dataUpBytesPerHost).toBeUndefined();
    expect(cutRounds[1].dataUpBytesPerHost).toEqual(written[1].dataUpBytesPerHost);
  });
});
