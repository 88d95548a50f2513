// Link faults, applied live at the engine's end of a link (the controller's
// side of an uplink, the relay's side of a rank's loopback leg), in either
// direction: what this end reads is shaped before its reader sees it, what it
// writes is shaped before the socket gets it. Byte counters stay exact: they
// count what actually crossed the socket.
import type { LinkFault } from '@shared/lab/contract';
import type { Direction } from '@shared/lab/state';

export type { LinkFault };

/**
 * When the link is next free in one direction. Shapers of faults that name
 * the same `shareKey` share one lane per direction, so their connections
 * draw from one rate together (a host's NIC: its data and control uplinks,
 * or every rank's connection of a host in direct mode), FIFO in the order
 * their bytes come. Up and down are separate lanes (a full-duplex link).
 */
export interface RateLane {
  nextFree: number;
}
const sharedLanes = new Map<string, RateLane>();

/** The lane of `key` in direction `dir`, created on first use. */
export function sharedLane(key: string, dir: Direction): RateLane {
  const id = `${key}\u0000${dir}`;
  let lane = sharedLanes.get(id);
  if (!lane) sharedLanes.set(id, (lane = { nextFree: 0 }));
  return lane;
}

/** Forgets the lanes of keys starting with `prefix` (when the connections that used them are gone). */
export function releaseSharedLanes(prefix: string): void {
  for (const id of sharedLanes.keys()) if (id.startsWith(prefix)) sharedLanes.delete(id);
}

/**
 * A shaped piece due sooner than this goes at once, up to this early: Node's
 * timers cannot fire sooner than 1 ms, so sleeping for less would add a whole
 * millisecond to every small piece (a record's header, a control frame) on
 * every shaped hop. The lane's schedule still counts the piece's bytes, so the
 * pieces after it keep the link's rate.
 */
export const SHAPER_EARLY_MS = 1;

/**
 * The timer to set for a piece due in `waitMs` (>= SHAPER_EARLY_MS): its whole
 * milliseconds, which is what Node waits anyway (it drops a delay's fraction:
 * a 1.6 ms timer fires after about 1.2 ms here). The inbound side rounded the
 * wait up instead and delivered about half the paced parts of a record, and
 * often its last, up to a millisecond late on every shaped hop. What is left
 * when the timer fires is within SHAPER_EARLY_MS and goes at once; the lane's
 * schedule is unchanged, so the link keeps its rate.
 */
export function shaperTimerMs(waitMs: number): number {
  return Math.max(1, Math.floor(waitMs));
}

/**
 * A bandwidth-capped piece is delivered in parts of about this much of the
 * link's time, each when its last byte would have arrived, as a NIC hands over
 * packets as they come. Delivered whole at the end of its wire time, a 256 KiB
 * consensus at 50 MB/s reached the relay 5.2 ms after it was sent, all at once,
 * and only then did the relay read and MAC it before its fan-out; now it reads
 * and MACs the record while the rest is still on the wire. One timer
 * resolution (SHAPER_EARLY_MS): finer parts would go out together anyway.
 */
export const SHAPER_PACE_MS = 1;
/** The smallest paced part: on a slow link a millisecond is only a few bytes. */
export const SHAPER_PACE_MIN_BYTES = 1024;

/** Cuts `bytes` into consecutive views of at most `size` bytes (one empty view for no bytes). */
function cut(bytes: Uint8Array, size: number): Uint8Array[] {
  if (bytes.length <= size) return [bytes];
  const out: Uint8Array[] = [];
  for (let o = 0; o < bytes.length; o += size) out.push(bytes.subarray(o, Math.min(bytes.length, o + size)));
  return out;
}

/** Delivery schedule for one direction: latency with jitter, a bandwidth cap, slicing. */
export class Shaper {
  private readonly lane: RateLane;
  /** `dir`: the way the shaped bytes travel; with `fault.shareKey` it picks the shared lane. */
  constructor(
    readonly fault: LinkFault,
    dir?: Direction,
  ) {
    this.lane = fault.shareKey && dir ? sharedLane(fault.shareKey, dir) : { nextFree: 0 };
  }

  /** Pieces of `bytes` with the time (ms from now) each may be delivered. */
  plan(bytes: Uint8Array, now: number): { at: number; bytes: Uint8Array }[] {
    const f = this.fault;
    const slices = f.sliceBytes && f.sliceBytes > 0 ? cut(bytes, f.sliceBytes) : [bytes];
    const rate = f.bandwidth && f.bandwidth > 0 ? f.bandwidth : 0;
    const pace = rate ? Math.max(SHAPER_PACE_MIN_BYTES, Math.floor((rate * SHAPER_PACE_MS) / 1000)) : 0;
    const out: { at: number; bytes: Uint8Array }[] = [];
    slices.forEach((slice, i) => {
      // The slicer's gap comes between its slices, not between the paced parts of one.
      const gap = i > 0 ? (f.sliceGapMs ?? 0) : 0;
      // One latency per slice: its paced parts travel together.
      const lat = (f.latencyMs ?? 0) + (f.jitterMs ? Math.random() * f.jitterMs : 0);
      (pace ? cut(slice, pace) : [slice]).forEach((p, j) => {
        const wire = rate ? (p.length * 1000) / rate : 0;
        // Order is kept: a piece never overtakes the one before it.
        const at = Math.max(now + lat, this.lane.nextFree + (j === 0 ? gap : 0)) + wire;
        this.lane.nextFree = at;
        out.push({ at, bytes: p });
      });
    });
    return out;
  }

  get shapes(): boolean {
    const f = this.fault;
    return !!(f.latencyMs || f.jitterMs || f.bandwidth || f.sliceBytes);
  }
}

/** Flips one bit in the middle of a copy of `bytes` (the original buffers stay intact). */
export function corrupt(bytes: Uint8Array): Uint8Array {
  const c = Uint8Array.from(bytes);
  const i = flippedIndex(c);
  if (i >= 0) c[i] ^= 0x10;
  return c;
}

/** The index `corrupt` flips (the middle byte), or -1 for no bytes. */
export function flippedIndex(bytes: Uint8Array): number {
  return bytes.length > 0 ? bytes.length >> 1 : -1;
}

/** Something a fault can be applied to: a connection's engine-side end. */
export interface FaultTarget {
  setFault(fault: LinkFault | null): void;
}
