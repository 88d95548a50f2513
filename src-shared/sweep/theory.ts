// What a case should cost, from the wire format alone: the exact bytes per
// host per round on the data channel, headers included, and the round time
// a shaped uplink implies. Independent of the engine on purpose: the sweep
// puts these beside what the tap counted, so a mismatch is a finding.
import type { UplinkMode, WireDtype } from '../lab/topology';

/** WIRE.md 3.2/3.4: mux record header, len-frame prefix, RoundFrame header and footer. */
export const MUX_RECORD_HEADER_BYTES = 25;
export const LEN_PREFIX_BYTES = 4;
const ROUND_FRAME_HEADER_BYTES = 17;
const ROUND_FRAME_FOOTER_BYTES = 8;

/**
 * The lab's synthetic model layout (src-main/engine/synthetic.ts modelLayout,
 * repeated here so the theory stays pure): a rows x 256 weight and a 1-D
 * remainder; explicit shapes replace it. A test checks the two agree.
 */
export function theoryShapes(modelBytes: number, shapes?: number[][]): number[][] {
  if (shapes && shapes.length > 0) return shapes;
  const numel = Math.max(1, Math.floor(modelBytes / 4));
  const cols = Math.min(256, numel);
  const rows = Math.floor(numel / cols);
  const rest = numel - rows * cols;
  return rest > 0 ? [[rows, cols], [rest]] : [[rows, cols]];
}

/** F: one RoundFrame's bytes (17 + per tensor 2 + 4*ndim + 8 + data + 8). */
export function roundFrameBytes(modelBytes: number, dtype: WireDtype, shapes?: number[][]): number {
  const elem = dtype === 'bf16' ? 2 : 4;
  let n = ROUND_FRAME_HEADER_BYTES + ROUND_FRAME_FOOTER_BYTES;
  for (const dims of theoryShapes(modelBytes, shapes))
    n += 2 + 4 * dims.length + 8 + dims.reduce((a, b) => a * b, 1) * elem;
  return n;
}

/**
 * Data-channel bytes one host sends up per round with K ranks:
 * fold one HostFrame record (25 + F), forward K of them, direct K len-framed frames (4 + F).
 */
export function dataUpBytes(mode: UplinkMode, k: number, frame: number): number {
  if (mode === 'fold') return MUX_RECORD_HEADER_BYTES + frame;
  if (mode === 'forward') return k * (MUX_RECORD_HEADER_BYTES + frame);
  return k * (LEN_PREFIX_BYTES + frame);
}

/**
 * Data-channel bytes one host receives per round: the consensus once per
 * host as a Broadcast record (25 + F) through a relay, once per rank
 * len-framed (4 + F) in direct mode.
 */
export function dataDownBytes(mode: UplinkMode, k: number, frame: number): number {
  if (mode === 'direct') return k * (LEN_PREFIX_BYTES + frame);
  return MUX_RECORD_HEADER_BYTES + frame;
}

/**
 * The round time the uplink alone implies when each host uplink carries
 * `bandwidth` bytes/s each way: the slowest host's bytes up, then the
 * consensus down, each with the one-way latency. Compute and loopback time
 * come on top, so a measured round is this or longer.
 */
export function shapedRoundMs(
  up: number[],
  down: number[],
  bandwidth: number | undefined,
  latencyMs = 0,
): number | null {
  if (!bandwidth || bandwidth <= 0) return latencyMs > 0 ? 2 * latencyMs : null;
  const upMs = (Math.max(...up) / bandwidth) * 1000;
  const downMs = (Math.max(...down) / bandwidth) * 1000;
  return upMs + downMs + 2 * latencyMs;
}

/** Median and p90 (nearest rank) of a list of times; 0 for none. */
export function roundStats(ms: number[]): { median: number; p90: number } {
  if (ms.length === 0) return { median: 0, p90: 0 };
  const s = [...ms].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
  const mid = s.length >> 1;
  return { median: s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2, p90: at(0.9) };
}
