// Decoding waits for a burst of forwarded bytes to end. A thread of its own
// keeps the decode's CPU off the forwarding thread, but on a small machine
// its memory traffic (two HMAC passes and a copy over every byte) still
// slowed an 8 MiB record through the tap; held until the bytes stop for
// `quietMs` (or until `maxHeldBytes` are waiting), the decode runs after the
// burst instead of under it. The units reach the window that much later;
// none is lost, and the order of everything is kept.

export interface DecodeGateOptions {
  /** Silence after which what is held is decoded (default 2 ms). */
  quietMs?: number;
  /** Held bytes past which they are decoded at once, burst or not (default 16 MiB). */
  maxHeldBytes?: number;
  now?: () => number;
}

export class DecodeGate<T> {
  private held: T[] = [];
  private heldBytes = 0;
  private lastAt = 0;
  private timer: NodeJS.Timeout | null = null;
  private readonly quietMs: number;
  private readonly maxHeldBytes: number;
  private readonly now: () => number;

  constructor(
    private readonly release: (item: T) => void,
    o: DecodeGateOptions = {},
  ) {
    this.quietMs = o.quietMs ?? 2;
    this.maxHeldBytes = o.maxHeldBytes ?? 16 * 1024 * 1024;
    this.now = o.now ?? (() => performance.now());
  }

  /** A chunk of the burst: held, unless too much already is. */
  hold(item: T, bytes: number): void {
    this.held.push(item);
    this.heldBytes += bytes;
    this.lastAt = this.now();
    if (this.heldBytes >= this.maxHeldBytes || this.quietMs <= 0) this.flush();
    else this.timer ??= setTimeout(() => this.check(), this.quietMs);
  }

  /** Everything held, decoded now (before any message that must come after it: an end, a flush). */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const items = this.held;
    this.held = [];
    this.heldBytes = 0;
    for (const item of items) this.release(item);
  }

  private check(): void {
    this.timer = null;
    const quietFor = this.now() - this.lastAt;
    if (quietFor >= this.quietMs) this.flush();
    else this.timer = setTimeout(() => this.check(), this.quietMs - quietFor);
  }
}
