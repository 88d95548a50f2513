// Link faults, applied live at the engine's end of a link (the controller's
// side of an uplink, the relay's side of a rank's loopback leg), in either
// direction: what this end reads is shaped before its reader sees it, what it
// writes is shaped before the socket gets it. Byte counters stay exact: they
// count what actually crossed the socket.
import type { LinkFault } from '@shared/lab/contract';

export type { LinkFault };

/** Delivery schedule for one direction: latency with jitter, a bandwidth cap, slicing. */
export class Shaper {
  private nextFree = 0;
  constructor(readonly fault: LinkFault) {}

  /** Pieces of `bytes` with the time (ms from now) each may be delivered. */
  plan(bytes: Uint8Array, now: number): { at: number; bytes: Uint8Array }[] {
    const f = this.fault;
    const pieces: Uint8Array[] = [];
    const size = f.sliceBytes && f.sliceBytes > 0 ? f.sliceBytes : bytes.length || 1;
    for (let o = 0; o < bytes.length; o += size)
      pieces.push(bytes.subarray(o, Math.min(bytes.length, o + size)));
    if (bytes.length === 0) pieces.push(bytes);
    const out: { at: number; bytes: Uint8Array }[] = [];
    for (const p of pieces) {
      const lat = (f.latencyMs ?? 0) + (f.jitterMs ? Math.random() * f.jitterMs : 0);
      const wire = f.bandwidth && f.bandwidth > 0 ? (p.length * 1000) / f.bandwidth : 0;
      const gap = out.length > 0 ? (f.sliceGapMs ?? 0) : 0;
      // Order is kept: a piece never overtakes the one before it.
      const at = Math.max(now + lat, this.nextFree + gap) + wire;
      this.nextFree = at;
      out.push({ at, bytes: p });
    }
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
  if (c.length > 0) c[c.length >> 1] ^= 0x10;
  return c;
}

/** Something a fault can be applied to: a connection's engine-side end. */
export interface FaultTarget {
  setFault(fault: LinkFault | null): void;
}
