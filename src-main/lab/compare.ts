// compareModes: the same workload in fold, forward and direct, so the uplink
// byte savings of the relay's fold are measured, not assumed. The bytes are
// the data channel's, each unit in its round (RoundReport.dataUpBytesPerHost),
// beside the wire format's exact figure (src-shared/sweep/theory.ts).
import type { CompareRow } from '@shared/lab/contract';
import { LAB_ONLY_MODES, type TopologyConfig, type UplinkMode } from '@shared/lab/topology';
import { dataUpBytes, roundFrameBytes } from '@shared/sweep/theory';
import { runTopology } from './run-topology';

export async function compareModes(base: TopologyConfig, rounds: number): Promise<CompareRow[]> {
  const modes: UplinkMode[] = ['fold', 'forward', 'direct'];
  const out: { mode: UplinkMode; perHost: number[]; ms: number; rounds: number }[] = [];
  for (const mode of modes) {
    // The external relays (fold) stay in the fold run; forward and direct have no relay to replace.
    const { relayCommands, ...rest } = base;
    const rep = await runTopology(
      {
        ...rest,
        ...(mode === 'fold' && relayCommands ? { relayCommands } : {}),
        mode,
        rounds,
        roundIntervalMs: 0,
        saltHex: undefined,
      },
      { snapLen: 0 },
    );
    const n = Math.max(1, rep.rounds.length);
    const perHost = base.ranksPerHost.map(
      (_, h) => rep.rounds.reduce((a, r) => a + (r.dataUpBytesPerHost?.[h] ?? 0), 0) / n,
    );
    out.push({
      mode,
      perHost,
      ms: rep.rounds.reduce((a, r) => a + r.durationMs, 0) / n,
      rounds: rep.rounds.length,
    });
  }
  const direct = out.find((o) => o.mode === 'direct')!;
  const frame = roundFrameBytes(base.modelBytes, base.dtype, base.shapes);
  return out.map((o) => ({
    mode: o.mode,
    labOnly: LAB_ONLY_MODES.has(o.mode),
    rounds: o.rounds,
    uplinkBytesPerHostPerRound: o.perHost,
    ratioToDirect: o.perHost.map((b, h) => (direct.perHost[h] ? b / direct.perHost[h] : 0)),
    theoryRatio: base.ranksPerHost.map(
      (k) => dataUpBytes(o.mode, k, frame) / dataUpBytes('direct', k, frame),
    ),
    msPerRound: o.ms,
  }));
}
