// What an imported capture says about its own run, read from its units (a
// capture has no engine beside it): the model size and wire dtype from a
// rank's Model RoundFrame, and its rounds. RoundFrames carry no round number,
// so rounds are counted: a rank's n-th RoundFrame up (and down) and a host's
// n-th HostFrame up and Broadcast down belong to the capture's round n, and
// the round is whole once every host's uplink carried its Broadcast. Rounds
// are numbered from the first one the capture holds.
import type { RoundReport } from '@shared/lab/records';
import type { WireDtype } from '@shared/lab/topology';
import { DTYPE_BF16, DTYPE_F32, ROUND_FRAME_MAGIC, ROUND_KIND_MODEL } from '@shared/wire/constants';
import type { TraceLink } from '../lab/trace/format';
import type { DecodedUnit } from './stream-decoder';

/** A RoundFrame's model: elements (f32 bytes = 4 x elements) and dtype; null when the bytes are not one. */
export function modelOfRoundFrame(
  bytes: Uint8Array,
  length: number,
  /** Bytes before the RoundFrame (a len-framed blob's 4-byte length). */
  at = 4,
): { elements: number; dtype: WireDtype } | null {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < at + 17 + 2) return null;
  if (dv.getUint32(at, true) !== ROUND_FRAME_MAGIC) return null;
  const tensors = dv.getUint32(at + 4, true);
  if (dv.getUint8(at + 8) !== ROUND_KIND_MODEL || tensors === 0) return null;
  let p = at + 17;
  const dtypeCode = dv.getUint8(p);
  const size = dtypeCode === DTYPE_F32 ? 4 : dtypeCode === DTYPE_BF16 ? 2 : 0;
  if (!size) return null;
  let elements = 0;
  let parsed = 0;
  for (; parsed < tensors; parsed++) {
    if (p + 2 > bytes.length) break;
    const ndim = dv.getUint8(p + 1);
    if (p + 2 + 4 * ndim + 8 > bytes.length) break;
    let n = 1;
    for (let i = 0; i < ndim; i++) n *= dv.getUint32(p + 2 + 4 * i, true);
    const nbytes = dv.getUint32(p + 2 + 4 * ndim, true) + dv.getUint32(p + 6 + 4 * ndim, true) * 2 ** 32;
    elements += n;
    p += 2 + 4 * ndim + 8 + nbytes;
  }
  // The snap length cut the frame before its last tensor headers: the data left (the unit's
  // length less the headers read and the 8-byte footer) is the rest, taking each header as 1-D.
  if (parsed < tensors) {
    const left = length - 8 - p - (tensors - parsed) * (2 + 4 + 8);
    if (left > 0) elements += Math.floor(left / size);
  }
  return { elements, dtype: dtypeCode === DTYPE_BF16 ? 'bf16' : 'f32' };
}

export interface CaptureRounds {
  /** From the first Model RoundFrame a rank sent whole enough to read. */
  modelBytes?: number;
  dtype?: WireDtype;
  /** The capture's round of each unit (by its index in the order given), where one is known. */
  roundOf: (number | undefined)[];
  /** Whole rounds: after the unit at index `after`, a report of what the capture shows of it. */
  reports: { after: number; report: RoundReport }[];
}

/** Counts the rounds of units in time order (each with its link). */
export function captureRounds(units: readonly { link: TraceLink; u: DecodedUnit }[]): CaptureRounds {
  const out: CaptureRounds = { roundOf: [], reports: [] };
  const counts = new Map<string, number>();
  const next = (key: string): number => {
    const n = counts.get(key) ?? 0;
    counts.set(key, n + 1);
    return n;
  };
  const hosts = new Set<number>();
  for (const { link } of units) if (link.kind === 'uplink' && link.host >= 0) hosts.add(link.host);
  const hostCount = hosts.size ? Math.max(...hosts) + 1 : 0;
  const broadcasts = new Map<number, number>();
  const accepted = new Map<number, Set<number>>();
  let uplinkBytes: number[] = new Array(hostCount).fill(0);
  let roundStart = units[0]?.u.t ?? 0;
  units.forEach(({ link, u }, i) => {
    if (u.dir === 'up' && link.kind === 'uplink' && link.host >= 0) uplinkBytes[link.host]! += u.length;
    if (u.verdict !== 'ok' || link.channel !== 'data') return;
    let round: number | undefined;
    if (u.kind === 'RoundFrame' && link.rank !== undefined) {
      round = next(`${link.id} ${u.dir}`);
      if (u.dir === 'up') {
        if (!accepted.has(round)) accepted.set(round, new Set());
        accepted.get(round)!.add(link.rank);
        if (out.modelBytes === undefined) {
          const m = modelOfRoundFrame(u.bytes, u.length);
          if (m) {
            out.modelBytes = m.elements * 4;
            out.dtype = m.dtype;
          }
        }
      }
    } else if (u.kind === 'HostFrame' && u.dir === 'up') round = next(`${link.id} up`);
    else if (u.kind === 'Broadcast' && u.dir === 'down') {
      round = next(`${link.id} down`);
      const seen = (broadcasts.get(round) ?? 0) + 1;
      broadcasts.set(round, seen);
      if (seen === hostCount) {
        out.reports.push({
          after: i,
          report: {
            round,
            accepted: [...(accepted.get(round) ?? [])].sort((a, b) => a - b),
            verdict: 'unchecked',
            durationMs: u.t - roundStart,
            uplinkBytesPerHost: uplinkBytes,
          },
        });
        roundStart = u.t;
        uplinkBytes = new Array(hostCount).fill(0);
      }
    }
    out.roundOf[i] = round;
  });
  return out;
}
