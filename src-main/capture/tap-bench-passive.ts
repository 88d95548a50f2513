// The passive tap's one-record figure for the tap bench: one 8 MiB record
// straight to a receiver the tap does not watch, against the same record
// straight to a receiver `relay-lab tap --passive` watches on loopback (no
// hop: only the kernel's copy into the capture ring is in the path, and the
// reading and decoding come after the burst). Interleaved with the tap
// running for both, as the forwarding tap's figure is taken with its taps
// started: here, sends from a process that has started any child ran
// 1.4-1.7x slower for seconds after (a child that exited at once as much as
// one left running), so a direct figure taken before the tap starts would be
// from another machine state. Medians; each watched send is decoded whole
// before the next one starts, as for the forwarding tap.
import { performance } from 'node:perf_hooks';
import type { Mac } from '@shared/wire/mac';
import { byteSink, close, portOf, timedSend, uplinkChunks } from './tap-bench-io';
import { startTapProcess, type BenchedTap } from './tap-bench-taps';

export type PassiveRecordFigure =
  | {
      bytes: number;
      rawMs: number;
      passiveMs: number;
      /** The goal for any tap is at most 1.2. */
      passiveOverDirect: number;
      /** Units the passive tap decoded over the units sent (1 = nothing missed). */
      unitsDecodedShare: number;
    }
  | { skipped: string };

export async function benchOneRecordPassive(
  mac: Mac,
  saltHex: string,
  o: { recordBytes: number; repeats: number },
): Promise<PassiveRecordFigure> {
  const chunks = uplinkChunks(mac, o.recordBytes, 1);
  const total = chunks.reduce((a, b) => a + b.length, 0);
  const unwatched = await byteSink(total);
  const watched = await byteSink(total);
  let tap: BenchedTap;
  try {
    tap = await startTapProcess(portOf(watched.sink), saltHex, { passive: true });
  } catch (e) {
    await close(unwatched.sink);
    await close(watched.sink);
    return { skipped: (e as Error).message.split('\n').pop()! };
  }
  const raw: number[] = [];
  const passive: number[] = [];
  try {
    for (let i = 0; i < o.repeats; i++) {
      raw.push((await timedSend(portOf(unwatched.sink), chunks, unwatched.wait)).ms);
      const before = tap.units();
      passive.push((await timedSend(portOf(watched.sink), chunks, watched.wait)).ms);
      const end = performance.now() + 30_000;
      while (tap.units() < before + chunks.length && performance.now() < end)
        await new Promise((r) => setTimeout(r, 2));
    }
  } finally {
    await tap.close();
    await close(unwatched.sink);
    await close(watched.sink);
  }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  return {
    bytes: total,
    rawMs: med(raw),
    passiveMs: med(passive),
    passiveOverDirect: med(passive) / med(raw),
    unitsDecodedShare: tap.units() / (o.repeats * chunks.length),
  };
}
