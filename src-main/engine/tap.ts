// The tap: exact byte counters per link and direction, and one record per
// unit that crosses a link (magic, handshake, len-framed blob, mux record).
// Counting is a pair of additions; a unit costs one small object plus a copy
// of at most `snapLen` bytes, so the data path is not slowed measurably.
import type { Direction, LinkView } from '@shared/lab/state';
import type { UnitCorruption, UnitLayer, UnitRecord } from '@shared/lab/records';
import { DEFAULT_SNAP_LEN } from '@shared/lab/topology';
import type { FaultTarget, LinkFault } from './link-fault';

export { DEFAULT_SNAP_LEN };

export type TapLinkInfo = Omit<LinkView, 'bytesUp' | 'bytesDown' | 'units'>;

export class TapLink {
  /** The engine-side ends of this link's connections, where link faults apply. */
  readonly targets = new Set<FaultTarget>();
  /** The fault holding on this link (shown in its view); one-shot faults (corruptNext, reset) never hold. */
  fault: LinkFault | null = null;
  bytesUp = 0;
  bytesDown = 0;
  units = 0;
  constructor(readonly info: TapLinkInfo) {}

  add(dir: Direction, n: number): void {
    if (dir === 'up') this.bytesUp += n;
    else this.bytesDown += n;
  }
  /** Records the socket's endpoints (the accepting side's view: remote = dialer). */
  setEndpoints(socket: { remoteAddress?: string; remotePort?: number; localPort?: number }): void {
    if (socket.remotePort && socket.localPort) {
      (this.info as TapLinkInfo).endpoints = {
        address: socket.remoteAddress ?? '127.0.0.1',
        clientPort: socket.remotePort,
        serverPort: socket.localPort,
      };
    }
  }
  view(): LinkView {
    const v: LinkView = { ...this.info, bytesUp: this.bytesUp, bytesDown: this.bytesDown, units: this.units };
    if (this.fault) v.fault = { ...this.fault };
    return v;
  }
}

/** Byte counts seen on a socket before it is known which link it is (e.g. before Hello). */
export class PendingBytes {
  private link: TapLink | null = null;
  private up = 0;
  private down = 0;
  add(dir: Direction, n: number): void {
    if (this.link) this.link.add(dir, n);
    else if (dir === 'up') this.up += n;
    else this.down += n;
  }
  bind(
    link: TapLink,
    socket?: { remoteAddress?: string; remotePort?: number; localPort?: number },
    target?: FaultTarget,
  ): void {
    this.link = link;
    if (socket) link.setEndpoints(socket);
    if (target) link.targets.add(target);
    link.add('up', this.up);
    link.add('down', this.down);
    this.up = this.down = 0;
  }
  get bound(): TapLink | null {
    return this.link;
  }
}

/** Collects the first `snapLen` bytes of a unit delivered in pieces. */
export class SnapCapture {
  private parts: Uint8Array[] = [];
  private kept = 0;
  length = 0;
  constructor(private readonly snapLen: number) {}
  push(bytes: Uint8Array): void {
    this.length += bytes.length;
    if (this.kept >= this.snapLen) return;
    const take = Math.min(bytes.length, this.snapLen - this.kept);
    this.parts.push(bytes.slice(0, take));
    this.kept += take;
  }
  bytes(): Uint8Array {
    if (this.parts.length === 1) return this.parts[0];
    const out = new Uint8Array(this.kept);
    let o = 0;
    for (const p of this.parts) {
      out.set(p, o);
      o += p.length;
    }
    return out;
  }
}

export interface UnitInput {
  link: TapLink;
  dir: Direction;
  layer: UnitLayer;
  kind: string;
  host?: number;
  rank?: number;
  round?: number;
  length: number;
  verdict?: UnitRecord['verdict'];
  summary: string;
  /** The unit's bytes (parts in order) or a capture already taken; only the first snapLen bytes are kept. */
  bytes?: Uint8Array[] | SnapCapture;
  flodlError?: string;
  corruption?: UnitCorruption;
  /** When it crossed, on this tap's clock (default now): a unit recorded elsewhere and sent here. */
  t?: number;
}

export interface TapOptions {
  snapLen?: number;
  /** Records kept for getRecordBytes (older ones are forgotten). */
  maxRecords?: number;
  /** Total captured bytes kept. */
  captureBudget?: number;
  now?: () => number;
}

export class Tap {
  readonly snapLen: number;
  readonly t0: number;
  private readonly now: () => number;
  private readonly links = new Map<string, TapLink>();
  private readonly captured = new Map<number, Uint8Array>();
  /** Seqs with kept bytes, oldest first from captureHead (a queue: shift() on a 20,000-entry array copies it every unit). */
  private captureOrder: number[] = [];
  private captureHead = 0;
  private capturedBytes = 0;
  private readonly maxRecords: number;
  private readonly captureBudget: number;
  private readonly recent: UnitRecord[] = [];
  private nextSeq = 0;
  private readonly listeners = new Set<(r: UnitRecord) => void>();

  constructor(opts: TapOptions = {}) {
    this.snapLen = opts.snapLen ?? DEFAULT_SNAP_LEN;
    this.maxRecords = opts.maxRecords ?? 20_000;
    this.captureBudget = opts.captureBudget ?? 64 * 1024 * 1024;
    this.now = opts.now ?? (() => performance.now());
    this.t0 = this.now();
  }

  /** Registers a link (or returns the existing one with that id). */
  link(info: TapLinkInfo): TapLink {
    let l = this.links.get(info.id);
    if (!l) {
      l = new TapLink(info);
      this.links.set(info.id, l);
    }
    return l;
  }

  /** Milliseconds since t0 on this tap's clock (what a record's t is). */
  elapsed(): number {
    return this.now() - this.t0;
  }

  getLink(id: string): TapLink | undefined {
    return this.links.get(id);
  }

  linkViews(): LinkView[] {
    return [...this.links.values()].map((l) => l.view());
  }

  /** A capture of a unit's first snapLen bytes, or of up to `atLeast` bytes (a unit a lab fault may corrupt, kept whole). */
  capture(atLeast = 0): SnapCapture {
    return new SnapCapture(this.snapLen > 0 ? Math.max(this.snapLen, atLeast) : 0);
  }

  /** Records one unit; returns its sequence number. */
  unit(u: UnitInput): number {
    const seq = this.nextSeq++;
    u.link.units++;
    let kept: Uint8Array | undefined;
    if (this.snapLen > 0 && u.bytes) {
      if (u.bytes instanceof SnapCapture) kept = u.bytes.bytes();
      else {
        const cap = new SnapCapture(this.snapLen);
        for (const p of u.bytes) cap.push(p);
        kept = cap.bytes();
      }
      this.keepCapture(seq, kept);
    }
    const rec: UnitRecord = {
      seq,
      t: u.t ?? this.now() - this.t0,
      link: u.link.info.id,
      dir: u.dir,
      layer: u.layer,
      kind: u.kind,
      length: u.length,
      captured: kept?.length ?? 0,
      verdict: u.verdict ?? 'ok',
      summary: u.summary,
    };
    if (u.host !== undefined) rec.host = u.host;
    else if (u.link.info.host >= 0) rec.host = u.link.info.host;
    if (u.rank !== undefined) rec.rank = u.rank;
    if (u.round !== undefined) rec.round = u.round;
    if (u.flodlError !== undefined) rec.flodlError = u.flodlError;
    if (u.corruption !== undefined) rec.corruption = u.corruption;
    this.recent.push(rec);
    if (this.recent.length > this.maxRecords * 2) this.recent.splice(0, this.recent.length - this.maxRecords);
    for (const l of this.listeners) l(rec);
    return seq;
  }

  /** The captured bytes of a unit still held, or undefined. */
  bytesOf(seq: number): { bytes: Uint8Array; record: UnitRecord } | undefined {
    const bytes = this.captured.get(seq);
    const record = this.findRecord(seq);
    if (!record) return undefined;
    return { bytes: bytes ?? new Uint8Array(0), record };
  }

  findRecord(seq: number): UnitRecord | undefined {
    // Records are in seq order: binary search the recent window.
    let lo = 0;
    let hi = this.recent.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const s = this.recent[mid].seq;
      if (s === seq) return this.recent[mid];
      if (s < seq) lo = mid + 1;
      else hi = mid - 1;
    }
    return undefined;
  }

  /** The newest record still held that matches, looking back at most `scan` records. */
  lastRecordWhere(match: (r: UnitRecord) => boolean, scan = 5000): UnitRecord | undefined {
    for (let i = this.recent.length - 1, n = 0; i >= 0 && n < scan; i--, n++)
      if (match(this.recent[i])) return this.recent[i];
    return undefined;
  }

  onRecord(listener: (r: UnitRecord) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get recordCount(): number {
    return this.nextSeq;
  }

  /** The records still held, oldest first (the recent window: the last maxRecords at least). */
  get heldRecords(): readonly UnitRecord[] {
    return this.recent;
  }

  private keepCapture(seq: number, bytes: Uint8Array): void {
    this.captured.set(seq, bytes);
    this.captureOrder.push(seq);
    this.capturedBytes += bytes.length;
    while (
      this.capturedBytes > this.captureBudget ||
      this.captureOrder.length - this.captureHead > this.maxRecords
    ) {
      if (this.captureHead >= this.captureOrder.length) break;
      const old = this.captureOrder[this.captureHead++];
      const b = this.captured.get(old);
      if (b) this.capturedBytes -= b.length;
      this.captured.delete(old);
    }
    if (this.captureHead > 4096 && this.captureHead * 2 > this.captureOrder.length) {
      this.captureOrder = this.captureOrder.slice(this.captureHead);
      this.captureHead = 0;
    }
  }
}
