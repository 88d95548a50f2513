// When the passive tap's capture may read. The kernel copies every loopback
// packet into the capture's ring whatever the reader does; that copy alone
// cost one 8 MiB record 1.16-1.21x its direct time here, but tcpdump reading
// the ring while the record was still moving cost 1.6-1.96x. So the reader
// (tcpdump) is held (stopped) by default: it is let go once loopback has
// carried bytes and then been quiet for `quietMs`, and held again as soon as
// it has read them (it has slept waiting for packets for `idleHoldMs`: its
// ring is empty) or a burst starts. Where the reader's sleep cannot be seen, it is held only at
// bursts and reads otherwise.
// A burst then finds the reader already held; the ring takes it, and the
// reading and decoding come after. Loopback's own byte counter says when it
// is busy: no packet is looked at to decide. Held at most `maxHeldMs` or
// `maxHeldBytes` (well under the ring), so traffic that never pauses is
// still read (for `drainMs` after each bound), and the window stays live.

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
  /**
   * Whether the reader sleeps waiting for packets (it has read all its ring held); null where that
   * cannot be seen (default: null).
   */
  readerIdle?: () => boolean | null;
  /**
   * How long the reader must sleep in poll() before it is held (default 2 ms): a reader asleep that
   * long has read its ring; a burst that starts while it is let go is read under (the cost held off).
   */
  idleHoldMs?: number;
  /** Longest the reader is held with bytes waiting (default 250 ms). */
  maxHeldMs?: number;
  /**
   * Most loopback bytes the reader is held across (default 32 MiB). The ring is 256 MiB, but on
   * loopback it takes each packet twice (sent and received) in frames sized for the largest one:
   * 67 MB held across overflowed it here, 64 MiB did not.
   */
  maxHeldBytes?: number;
  /** After a bound let the reader go, it reads this long before it may be held again (default 50 ms). */
  drainMs?: number;
  now?: () => number;
}

export class CapturePacer {
  private last: number;
  private held = false;
  private waitingSince: number | null = null;
  private heldBytes = 0;
  private lastMoveAt = -Infinity;
  private noHoldUntil = -Infinity;
  private idleSince: number | null = null;
  /** Times the reader was let go, and let go by a bound while bytes still moved (for the bench and logs). */
  releases = 0;
  forcedReleases = 0;
  private readonly busyBytes: number;
  private readonly quietMs: number;
  private readonly maxHeldMs: number;
  private readonly maxHeldBytes: number;
  private readonly drainMs: number;
  private readonly idleHoldMs: number;
  private readonly now: () => number;

  constructor(private readonly o: CapturePacerOptions) {
    this.busyBytes = o.busyBytes ?? 64 * 1024;
    this.quietMs = o.quietMs ?? 2;
    this.maxHeldMs = o.maxHeldMs ?? 250;
    this.maxHeldBytes = o.maxHeldBytes ?? 32 * 1024 * 1024;
    this.drainMs = o.drainMs ?? 50;
    this.idleHoldMs = o.idleHoldMs ?? 2;
    this.now = o.now ?? (() => performance.now());
    this.last = o.readCounter();
    this.hold();
  }

  get holding(): boolean {
    return this.held;
  }

  /** One poll of the counter (every millisecond or so). */
  tick(): void {
    const counter = this.o.readCounter();
    const moved = Math.max(0, counter - this.last);
    this.last = counter;
    const t = this.now();
    if (moved > 0) this.lastMoveAt = t;
    if (this.held) {
      if (moved > 0) {
        this.waitingSince ??= t;
        this.heldBytes += moved;
      }
      if (this.waitingSince === null) return;
      const quiet = t - this.lastMoveAt >= this.quietMs;
      const bound = t - this.waitingSince >= this.maxHeldMs || this.heldBytes >= this.maxHeldBytes;
      if (quiet || bound) this.release(t, !quiet);
      return;
    }
    // Reading: held again at a burst, or once it has read what there was.
    if (t < this.noHoldUntil) return;
    if (moved >= this.busyBytes) {
      this.hold();
      this.waitingSince = t;
      this.heldBytes = moved;
    } else if (this.o.readerIdle?.() !== true) this.idleSince = null;
    else if (t - (this.idleSince ??= t) >= this.idleHoldMs) {
      this.hold();
      // Bytes that came since the last poll may be past what it read: they wait for the next release.
      if (moved > 0) this.waitingSince = t;
    }
  }

  /** Let go for good (the tap is closing). */
  stop(): void {
    if (this.held) this.o.release();
    this.held = false;
    this.noHoldUntil = Infinity;
  }

  private hold(): void {
    this.held = true;
    this.idleSince = null;
    this.waitingSince = null;
    this.heldBytes = 0;
    this.o.hold();
  }

  private release(t: number, forced: boolean): void {
    this.held = false;
    this.releases++;
    if (forced) {
      this.forcedReleases++;
      this.noHoldUntil = t + this.drainMs;
    }
    this.o.release();
  }
}
