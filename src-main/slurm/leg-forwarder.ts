// On a host agent's node: the relay's loopback legs (rank <-> relay), recorded
// by the relay's own tap (engine/tap.ts, the recorder a local host's relay
// records its legs with) and sent to the engine, which records them in the
// job's tap under the same link names (leg-recorder.ts). In order, batched per
// tick, and bounded: the agent link also carries the ranks' messages, so leg
// units never hold more than `queueBytes` of it unacknowledged. Past that a
// unit is dropped before it is encoded, counted per link and direction, and
// named to the engine as a gap once the link has caught up. The relay and
// the ranks never wait for the engine.
import type { UnitRecord } from '@shared/lab/records';
import { Tap } from '../engine/tap';
import {
  LEG_SNAP_MAX,
  MAX_LINE_BYTES,
  type AgentToEngine,
  type LegGap,
  type LegOptions,
  type LegUnit,
} from './agent-protocol';

/** How often the legs' byte counters go to the engine. */
const COUNTERS_EVERY_MS = 250;
/** A batch of units stays under this many bytes a line (one unit of LEG_SNAP_MAX alone fits MAX_LINE_BYTES). */
const BATCH_BYTES = (MAX_LINE_BYTES * 3) / 4;
/** A unit's JSON beside its bytes: the record's fields, generously. */
const RECORD_OVERHEAD = 320;
const NO_BYTES = new Uint8Array(0);
/** The longest summary or flodl error text a unit carries to the engine. */
const TEXT_MAX = 2000;

function clamp(v: unknown, lo: number, hi: number, dflt: number): number {
  return typeof v === 'number' && Number.isFinite(v) ? Math.min(hi, Math.max(lo, Math.floor(v))) : dflt;
}

/** What a unit costs on the agent link, before it is encoded. */
function sizeOf(r: UnitRecord, bytes: Uint8Array): number {
  return 4 * Math.ceil(bytes.length / 3) + RECORD_OVERHEAD + r.summary.length + (r.flodlError?.length ?? 0);
}

export class LegForwarder {
  /** The relay's tap: give it to Relay.listen. */
  readonly tap: Tap;
  private readonly bound: number;
  private pendingRecords: { r: UnitRecord; bytes: Uint8Array; size: number }[] = [];
  /** Leg bytes offered to the link and acknowledged by the engine (sizeOf units). */
  private sent = 0;
  private acked = 0;
  /** Dropping: units wait for the link to catch up (half the bound) before any goes again. */
  private behind = false;
  private readonly gaps = new Map<string, LegGap>();
  private readonly announced = new Set<string>();
  private readonly counters = new Map<string, string>();
  private flushQueued = false;
  private closed = false;
  private readonly timer: NodeJS.Timeout;
  private readonly detach: () => void;
  /** Units dropped so far (all gaps together). */
  notKept = 0;

  constructor(
    opts: LegOptions,
    /** Writes one message on the agent link as it is (no flush of the legs first). */
    private readonly write: (m: AgentToEngine) => void,
  ) {
    const snapLen = clamp(opts.snapLen, 0, LEG_SNAP_MAX, 0);
    this.bound = clamp(opts.queueBytes, 1, 1 << 30, 1);
    // Only the unit just recorded is read back, at once: a few records and captures are plenty.
    this.tap = new Tap({ snapLen, maxRecords: 256, captureBudget: Math.max(4 * snapLen, 1 << 20) });
    this.detach = this.tap.onRecord((r) => this.offer(r));
    this.timer = setInterval(() => this.tick(), COUNTERS_EVERY_MS);
    this.timer.unref();
  }

  private get inFlight(): number {
    return this.sent - this.acked;
  }

  private offer(rec: UnitRecord): void {
    if (this.closed) return;
    // A unit must fit one line of the link: the lab's own texts are short, a hostile one is cut.
    const r =
      rec.summary.length > TEXT_MAX || (rec.flodlError?.length ?? 0) > TEXT_MAX
        ? { ...rec, summary: rec.summary.slice(0, TEXT_MAX), flodlError: rec.flodlError?.slice(0, TEXT_MAX) }
        : rec;
    if (this.behind && this.inFlight <= this.bound / 2) this.caughtUp();
    const bytes = this.tap.bytesOf(r.seq)?.bytes ?? NO_BYTES;
    const size = sizeOf(r, bytes);
    // One unit alone always goes (a snap length past the bound would otherwise keep nothing).
    if (!this.behind && (this.inFlight === 0 || this.inFlight + size <= this.bound)) {
      if (!this.announced.has(r.link)) this.announce(r.link);
      this.pendingRecords.push({ r, bytes, size });
      this.sent += size;
      if (!this.flushQueued) {
        this.flushQueued = true;
        setImmediate(() => this.flush());
      }
      return;
    }
    this.behind = true;
    this.notKept++;
    const key = `${r.link} ${r.dir}`;
    let g = this.gaps.get(key);
    if (!g) this.gaps.set(key, (g = { link: r.link, dir: r.dir, t: r.t, units: 0, bytes: 0, rejected: 0 }));
    g.units++;
    g.bytes += r.length;
    if (r.verdict !== 'ok') g.rejected++;
  }

  private announce(id: string): void {
    this.announced.add(id);
    const ends = this.tap.getLink(id)?.info.endpoints;
    this.write({ type: 'legLink', id, ...(ends ? { endpoints: { ...ends } } : {}) });
  }

  /** Sends the units waiting for this tick (before any other message of the agent, so order holds). */
  flush(): void {
    this.flushQueued = false;
    if (this.pendingRecords.length === 0) return;
    const now = this.tap.elapsed();
    let units: LegUnit[] = [];
    let size = 0;
    for (const { r, bytes, size: s } of this.pendingRecords.splice(0)) {
      if (size > 0 && size + s > BATCH_BYTES) {
        this.write({ type: 'legUnits', now, size, units });
        units = [];
        size = 0;
      }
      units.push({ r, b: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('base64') });
      size += s;
    }
    this.write({ type: 'legUnits', now, size, units });
  }

  /** The engine has received this many leg bytes (legAck). */
  ack(bytes: unknown): void {
    if (typeof bytes !== 'number' || !Number.isFinite(bytes)) return;
    this.acked = Math.max(this.acked, Math.min(bytes, this.sent));
    if (this.behind && this.inFlight <= this.bound / 2) this.caughtUp();
  }

  /** The link caught up: what was sent before the drops goes first, then the gaps by name. */
  private caughtUp(): void {
    this.behind = false;
    this.flush();
    for (const g of this.gaps.values()) this.write({ type: 'legGap', gap: g });
    this.gaps.clear();
  }

  private tick(): void {
    if (this.behind && this.inFlight <= this.bound / 2) this.caughtUp();
    const changed: [string, number, number][] = [];
    for (const v of this.tap.linkViews()) {
      const key = `${v.bytesUp} ${v.bytesDown}`;
      if (this.counters.get(v.id) === key) continue;
      this.counters.set(v.id, key);
      changed.push([v.id, v.bytesUp, v.bytesDown]);
    }
    if (changed.length > 0) {
      this.flush();
      this.write({ type: 'legBytes', links: changed });
    }
  }

  /** The relay is gone: what is held goes out, gaps included, with the final counters. */
  close(): void {
    if (this.closed) return;
    this.tick();
    this.caughtUp();
    this.closed = true;
    clearInterval(this.timer);
    this.detach();
  }
}
