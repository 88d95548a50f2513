// Real processes: a fold round's model-sized units (the controller's
// HostFrames, each relay's Broadcast) take their buffers from the engine's
// pool and give them back, so after the first rounds no round takes fresh
// memory for them (a fresh buffer's page faults cost about 2.8 ms per MiB
// on the lab's VMs: buffer-pool.ts).
import { describe, expect, it } from 'vitest';
import { DEFAULT_TOPOLOGY } from '@shared/lab/topology';
import { unitBuffers } from '../engine/buffer-pool';
import { runTopology } from './run-topology';
import type { TopologySession } from './topology-session';

describe("the engine's unit buffers", () => {
  it('are recycled from round to round in a fold run', async () => {
    const freshAt: number[] = [];
    const report = await runTopology(
      { ...DEFAULT_TOPOLOGY, ranksPerHost: [2, 1], modelBytes: 1 << 20, rounds: 8, roundIntervalMs: 0 },
      {
        onRoundsStart: (s: TopologySession) =>
          (s.requireRounds().onRoundStart = () => freshAt.push(unitBuffers.stats.fresh)),
      },
    );
    expect(report.verdict).toBe('ok');
    expect(freshAt.length).toBeGreaterThanOrEqual(7);
    // Rounds 0 and 1 may take fresh buffers (two HostFrames, two Broadcasts in flight); none after.
    expect(freshAt[freshAt.length - 1]).toBe(freshAt[2]);
    expect(unitBuffers.stats.taken).toBeGreaterThanOrEqual(8 * 4);
    // Stopped: the pool lets go of its buffers.
    expect(unitBuffers.stats.free).toBe(0);
  });
});
