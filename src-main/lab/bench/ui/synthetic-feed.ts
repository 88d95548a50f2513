// The window benchmark's feed (npm run bench:ui): real encoded units, taken
// from a running cluster's own tap, replayed into that same tap at a chosen
// rate. Each replayed unit is a fresh tap record (new seq, its bytes copied
// under the snap length, its round moved on by whole cycles), so it reaches
// the window by the path every real record takes: tap -> topology session ->
// frame batcher -> lab host -> web server client -> WebSocket -> renderer
// store. Only the sockets and rank processes are skipped, which is the point:
// the feed can run faster than the engine alone would.
import type { UnitRecord } from '@shared/lab/records';
import type { Tap, TapLink, UnitInput } from '../../../engine/tap';

/** One harvested unit: what the tap was told about it, and the bytes it kept. */
export interface UnitTemplate {
  link: TapLink;
  input: Omit<UnitInput, 'link' | 'bytes' | 'round'>;
  round?: number;
  bytes: Uint8Array;
}

/**
 * Listens to a tap until `want` units with bytes have crossed it, then
 * resolves with them as templates (rejects after `timeoutMs`).
 */
export function harvestUnits(tap: Tap, want: number, timeoutMs = 30_000): Promise<UnitTemplate[]> {
  return new Promise((resolve, reject) => {
    const out: UnitTemplate[] = [];
    const timer = setTimeout(() => {
      off();
      reject(new Error(`harvest: only ${out.length} of ${want} units crossed the tap in ${timeoutMs} ms`));
    }, timeoutMs);
    const off = tap.onRecord((r) => {
      const t = templateOf(tap, r);
      if (t) out.push(t);
      if (out.length >= want) {
        clearTimeout(timer);
        off();
        resolve(out);
      }
    });
  });
}

/** A template from a record the tap still holds (its link and captured bytes), or null. */
export function templateOf(tap: Tap, r: UnitRecord): UnitTemplate | null {
  const link = tap.getLink(r.link);
  const held = tap.bytesOf(r.seq);
  if (!link || !held || held.bytes.length === 0) return null;
  const input: UnitTemplate['input'] = {
    dir: r.dir,
    layer: r.layer,
    kind: r.kind,
    length: r.length,
    verdict: r.verdict,
    summary: r.summary,
  };
  if (r.host !== undefined) input.host = r.host;
  if (r.rank !== undefined) input.rank = r.rank;
  return { link, input, round: r.round, bytes: held.bytes };
}

export interface FeedCounts {
  /** Units put into the tap since start(). */
  emitted: number;
  /** Units the feed was behind its schedule at the last tick (the engine's loop could not keep up). */
  behind: number;
  /** Rate asked for, units per second. */
  rate: number;
}

/** Replays templates into a tap at `rate` units per second, in ticks of `tickMs`. */
export class SyntheticFeed {
  private timer: ReturnType<typeof setInterval> | null = null;
  private startedAt = 0;
  private next = 0;
  private cycle = 0;
  private readonly roundSpan: number;
  private readonly roundBase: number;
  readonly counts: FeedCounts = { emitted: 0, behind: 0, rate: 0 };
  private readonly inputs: UnitInput[];

  constructor(
    private readonly tap: Tap,
    private readonly templates: readonly UnitTemplate[],
    private readonly now: () => number = () => performance.now(),
    /** The largest burst one tick may emit, in seconds of schedule (a stalled loop does not flood). */
    private readonly maxBurstS = 0.25,
  ) {
    if (templates.length === 0) throw new Error('a synthetic feed needs at least one unit template');
    const rounds = templates.map((t) => t.round).filter((r): r is number => r !== undefined);
    this.roundBase = rounds.length ? Math.min(...rounds) : 0;
    this.roundSpan = rounds.length ? Math.max(...rounds) - this.roundBase + 1 : 1;
    this.inputs = templates.map((t) => ({ ...t.input, link: t.link, bytes: [t.bytes] }));
  }

  start(rate: number, tickMs = 4): void {
    this.stop();
    if (!(rate > 0)) throw new RangeError(`feed rate must be positive, not ${rate}`);
    this.counts.rate = rate;
    this.counts.emitted = 0;
    this.counts.behind = 0;
    this.startedAt = this.now();
    this.timer = setInterval(() => this.tick(), tickMs);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Emits every unit due by now (called by the timer; tests call it with their own clock). */
  tick(): number {
    const due = Math.floor(((this.now() - this.startedAt) / 1000) * this.counts.rate);
    let n = due - this.counts.emitted;
    const cap = Math.max(1, Math.ceil(this.counts.rate * this.maxBurstS));
    this.counts.behind = Math.max(0, n - cap);
    if (n > cap) {
      // Too far behind: skip the backlog rather than flood, and say so (counts.behind).
      this.startedAt += ((n - cap) / this.counts.rate) * 1000;
      n = cap;
    }
    for (let i = 0; i < n; i++) this.emitOne();
    return n;
  }

  /** Puts the next template into the tap as a new unit. */
  emitOne(): number {
    const t = this.templates[this.next];
    // One input object per template, made once (the tap copies what it keeps; only the round changes).
    const u = this.inputs[this.next];
    if (t.round !== undefined) u.round = t.round + this.cycle * this.roundSpan;
    const seq = this.tap.unit(u);
    this.counts.emitted++;
    if (++this.next === this.templates.length) {
      this.next = 0;
      this.cycle++;
    }
    return seq;
  }

  get running(): boolean {
    return this.timer !== null;
  }
}
