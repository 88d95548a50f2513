// How fast rows stream into the records list, and whether that is past reading.
// The list draws its rows on a canvas while it follows a stream faster than
// anyone reads (StreamRate.fast), and as DOM rows otherwise. Two thresholds, so
// a rate near one of them does not flip the list between the two every frame.

/** Rows a second from which the following list draws on a canvas. */
export const FAST_ROWS_PER_SEC = 2_000;
/** Rows a second below which it goes back to DOM rows. */
export const SLOW_ROWS_PER_SEC = 1_000;

export class StreamRate {
  private readonly batches: { t: number; n: number }[] = [];
  private isFast = false;

  constructor(private readonly windowMs = 1_000) {}

  /** `n` rows arrived at time `now` (ms). */
  add(n: number, now: number): void {
    if (n > 0) this.batches.push({ t: now, n });
    this.expire(now);
  }

  /** Rows a second over the last window. */
  perSecond(now: number): number {
    this.expire(now);
    let sum = 0;
    for (const b of this.batches) sum += b.n;
    return (sum * 1_000) / this.windowMs;
  }

  /**
   * Past reading: becomes true at FAST_ROWS_PER_SEC when its rows came over at least half the window, false
   * again below SLOW_ROWS_PER_SEC. One burst (a big round's records at once) is not a stream.
   */
  fast(now: number): boolean {
    const rate = this.perSecond(now);
    const b = this.batches;
    const held = b.length > 1 && b[b.length - 1].t - b[0].t >= this.windowMs / 2;
    if (rate >= FAST_ROWS_PER_SEC && held) this.isFast = true;
    else if (rate < SLOW_ROWS_PER_SEC) this.isFast = false;
    return this.isFast;
  }

  reset(): void {
    this.batches.length = 0;
    this.isFast = false;
  }

  private expire(now: number): void {
    let drop = 0;
    while (drop < this.batches.length && this.batches[drop].t <= now - this.windowMs) drop++;
    if (drop) this.batches.splice(0, drop);
  }
}
