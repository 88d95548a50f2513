// When the passive tap's capture may read. The kernel copies every loopback
// packet into the capture's ring whatever the reader does; that copy alone
// cost one 8 MiB record 1.16-1.21x its direct time here, but tcpdump reading
// the ring while the record was still moving cost 1.6-1.96x. So the reader
// (tcpdump) is stopped while loopback is busy and let go once the bytes
// have stopped for `quietMs`: the ring holds the burst, and the reading and
// decoding come after it. Loopback's own byte counter says when it is busy:
// no packet is looked at to decide. Held at most `maxHeldMs` or
// `maxHeldBytes` (well under the ring), so traffic that never pauses is still
// read (for `drainMs` after each bound), and the window stays live.

export interface CapturePacerOptions {
  /** Bytes loopback has carried so far (its tx_bytes counter). */
  readCounter(): number;
  /** Stop and let go of the reader (SIGSTOP, SIGCONT). */
  hold(): void;
  release(): void;
  /** Bytes between two polls that make loopback busy (default 64 KiB). */
  busyBytes?: number;
  /** Quiet after which the reader is let go (default 2 ms). */
  quietMs?: number;
  /** Longest the reader is held (default 250 ms). */
  maxHeldMs?: number;
  /** Most loopback bytes the reader is held across (default 96 MiB: the ring is 256 MiB). */
  maxHeldBytes?: number;
  /** After a bound let the reader go, it reads this long before it may be held again (default 50 ms). */
  drainMs?: number;
  now?: () => number;
}

export class CapturePacer {
  private last: number;
  private held = false;
  private heldSince = 0;
  private heldBytes = 0;
  private lastBusyAt = -Infinity;
  private noHoldUntil = -Infinity;
  /** Times the reader was held, and let go early because a bound was reached (for the bench and logs). */
  holds = 0;
  forcedReleases = 0;
  private readonly busyBytes: number;
  private readonly quietMs: number;
  private readonly maxHeldMs: number;
  private readonly maxHeldBytes: number;
  private readonly drainMs: number;
  private readonly now: () => number;

  constructor(private readonly o: CapturePacerOptions) {
    this.busyBytes = o.busyBytes ?? 64 * 1024;
    this.quietMs = o.quietMs ?? 2;
    this.maxHeldMs = o.maxHeldMs ?? 250;
    this.maxHeldBytes = o.maxHeldBytes ?? 96 * 1024 * 1024;
    this.drainMs = o.drainMs ?? 50;
    this.now = o.now ?? (() => performance.now());
    this.last = o.readCounter();
  }

  get holding(): boolean {
    return this.held;
  }

  /** One poll of the counter (every millisecond or so). */
  tick(): void {
    const counter = this.o.readCounter();
    const moved = counter - this.last;
    this.last = counter;
    const t = this.now();
    if (moved >= this.busyBytes) {
      this.lastBusyAt = t;
      if (!this.held && t >= this.noHoldUntil) {
        this.held = true;
        this.heldSince = t;
        this.heldBytes = 0;
        this.holds++;
        this.o.hold();
      }
    }
    if (!this.held) return;
    this.heldBytes += Math.max(0, moved);
    const bound = t - this.heldSince >= this.maxHeldMs || this.heldBytes >= this.maxHeldBytes;
    if (t - this.lastBusyAt >= this.quietMs || bound) {
      if (bound && t - this.lastBusyAt < this.quietMs) {
        this.forcedReleases++;
        this.noHoldUntil = t + this.drainMs;
      }
      this.held = false;
      this.o.release();
    }
  }

  /** Let go for good (the tap is closing). */
  stop(): void {
    if (this.held) this.o.release();
    this.held = false;
  }
}
