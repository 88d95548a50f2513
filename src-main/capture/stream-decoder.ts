// Decodes both directions of one flodl TCP connection from the side, without
// ever being in its path: fed the bytes each way (a live tap's copies, or a
// capture's reassembled stream), it recognises the channel from the first
// bytes (channel magic, rank handshake, mux record, len-frame), frames every
// unit, judges it with the codec and reports it. Bytes it cannot frame
// (garbage, an over-ceiling length, a gap in a capture) are reported and
// skipped until a plausible unit start: it resynchronises rather than stops.
// (Longer than the usual 400 lines: one state machine over both directions,
// whose boundary, resync and gap rules share the same per-direction state.)
import type { Direction } from '@shared/lab/state';
import type { ControlIndexTable } from '@shared/wire/control-msg-tables';
import type { UnitLayer } from '@shared/lab/records';
import { readU32LE } from '@shared/wire/bytes';
import {
  CHANNEL_MAGIC_CONTROL,
  CHANNEL_MAGIC_DATA,
  CONTROL_FRAME_MAGIC,
  CONTROL_HANDSHAKE_LEN,
  CONTROL_HANDSHAKE_MAGIC_RANK,
  DATA_ACK_LEN,
  CONTROL_ACK_LEN,
  DATA_HANDSHAKE_LEN,
  DEFAULT_FRAME_CEILING,
  HANDSHAKE_MAGIC_CONTROLLER_ACK,
  HANDSHAKE_MAGIC_RANK,
  CONTROL_HANDSHAKE_MAGIC_ACK,
  MUX_HEADER_LEN,
  MUX_MAC_PREFIX_LEN,
  MUX_PROTOCOL_VERSION,
  MUX_RECORD_MAGIC,
  ROUND_FRAME_MAGIC,
} from '@shared/wire/constants';
import { CONTROL_HANDSHAKE_V4_LEN } from '@shared/wire/handshake';
import { checkLenPrefix } from '@shared/wire/len-frame';
import { isWireError, type WireErrorCode } from '@shared/wire/errors';
import type { Mac } from '@shared/wire/mac';
import { checkMuxHeaderPrefix, muxKindOfByte } from '@shared/wire/mux';
import { UnitAssembly } from './unit-assembly';
import { innerKindOf, type UnitFacts } from './unit-judge';

/** 'undecodable': bytes that are not a unit flodl accepts; 'gap': bytes that were never seen. */
export type UnitVerdict = 'ok' | 'undecodable' | 'gap' | 'stalled';

export interface DecodedUnit extends Omit<UnitFacts, 'verdict'> {
  /** Time of the unit's last byte (the caller's clock, ms). */
  t: number;
  dir: Direction;
  layer: UnitLayer;
  /** Full length on the wire (for a gap: the bytes missing). */
  length: number;
  /** The first snapLen bytes of the unit. */
  bytes: Uint8Array;
  verdict: UnitVerdict;
  /** The codec's stable code when not ok. */
  code?: WireErrorCode;
}

/**
 * Units above this are checked streamed (unit-assembly.ts): the dissector's
 * field tree costs about 0.4 ms per KiB, so a model-sized unit judged whole
 * would hold the tap's event loop (and its forwarding) for seconds.
 */
export const DEFAULT_WHOLE_LIMIT = 64 * 1024;

export interface StreamDecoderOptions {
  mac: Mac;
  ceiling?: number;
  controlVersion?: number;
  indexTable?: ControlIndexTable;
  /** Bytes of each unit kept for the record (default 64 KiB). */
  snapLen?: number;
  /** Units up to this size are held whole and dissected; bigger ones are checked streamed (default DEFAULT_WHOLE_LIMIT). */
  wholeLimit?: number;
  /** The stream's start was not seen (a capture begun mid-connection): find the first unit boundary. */
  midStream?: boolean;
  onUnit(u: DecodedUnit): void;
}

type Mode = 'boundary' | 'unit' | 'resync';
export type Framing = 'mux' | 'len' | null;

interface DirState {
  dir: Direction;
  mode: Mode;
  /** Bytes waiting at a boundary or during resync (never more than a header plus a chunk). */
  pending: Uint8Array;
  unit: UnitAssembly | null;
  /** Bytes the stream has delivered in this direction. */
  offset: number;
  skipped: number;
  skipReason: { code: WireErrorCode; message: string; gap: boolean } | null;
  /** The first bytes of a skipped run, kept for the record. */
  skipHead: Uint8Array;
  /** 1 right after a boundary failed at pending[0], so resync does not find the same start again. */
  scanFrom: number;
}

const RESYNC_LOOKAHEAD = MUX_MAC_PREFIX_LEN;

/** The kind of a unit cut short, from the header bytes that arrived. */
function cutKindOf(layer: UnitLayer, head: Uint8Array): string {
  if (layer === 'mux') return (head.length > 8 && muxKindOfByte(head[8])) || 'MuxRecord';
  if (layer === 'lenframe') return innerKindOf(head.subarray(4)) ?? 'LenFrame';
  return layer;
}

const MUX_MAGIC_BYTES = Buffer.from([0xd0, 0x17, 0x0d, 0xf1]);
const u32 = (p: Uint8Array, i: number): number =>
  (p[i] | (p[i + 1] << 8) | (p[i + 2] << 16) | (p[i + 3] << 24)) >>> 0;

export class StreamDecoder {
  channel: 'data' | 'control' | null = null;
  framing: Framing = null;
  /** 'uplink' = relay <-> controller (mux), 'direct' = rank <-> controller, 'loopback' = rank <-> relay. */
  role: 'uplink' | 'direct' | 'loopback' | null = null;
  hello: { host: string; ranks: number[] } | null = null;
  handshakeRank: number | null = null;
  readonly stats = { units: 0, undecodable: 0, gapBytes: 0 };
  private readonly ceiling: number;
  private readonly snapLen: number;
  private readonly wholeLimit: number;
  private readonly dirs: Record<Direction, DirState>;
  private sawMagic = false;

  constructor(private readonly o: StreamDecoderOptions) {
    this.ceiling = o.ceiling ?? DEFAULT_FRAME_CEILING;
    this.snapLen = o.snapLen ?? 64 * 1024;
    this.wholeLimit = o.wholeLimit ?? DEFAULT_WHOLE_LIMIT;
    const mk = (dir: Direction): DirState => ({
      dir,
      mode: o.midStream ? 'resync' : 'boundary',
      pending: new Uint8Array(0),
      unit: null,
      offset: 0,
      skipped: 0,
      skipReason: o.midStream
        ? {
            code: 'TRUNCATED',
            message: 'the capture starts mid-stream: the rest of a unit whose start is missing',
            gap: true,
          }
        : null,
      skipHead: new Uint8Array(0),
      scanFrom: 0,
    });
    this.dirs = { up: mk('up'), down: mk('down') };
  }

  /** Bytes of a unit in progress (for a stall report), or null at a boundary. */
  partial(dir: Direction): { kind: UnitLayer; got: number; total: number } | null {
    const u = this.dirs[dir].unit;
    return u ? { kind: u.layer, got: u.got, total: u.total } : null;
  }

  push(dir: Direction, chunk: Uint8Array, t: number): void {
    const s = this.dirs[dir];
    if (this.o.midStream && s.offset === 0 && chunk.length > 0)
      // How much came before is unknown: a gap of unknown length marks it.
      this.emit({
        t,
        dir,
        layer: this.layerOfFraming(),
        kind: 'gap',
        length: 0,
        bytes: new Uint8Array(0),
        verdict: 'gap',
        code: 'TRUNCATED',
        message: 'the capture starts mid-stream: the earlier bytes of this connection are missing',
        summary: 'gap: the capture starts mid-stream',
      });
    s.offset += chunk.length;
    let rest = chunk;
    while (rest.length > 0) {
      if (s.mode === 'unit') {
        const n = s.unit!.add(rest);
        rest = rest.subarray(n);
        if (s.unit!.remaining === 0) this.finishUnit(s, t);
        continue;
      }
      s.pending = s.pending.length ? Buffer.concat([s.pending, rest]) : rest;
      rest = s.mode === 'boundary' ? this.atBoundary(s, t) : this.resync(s, t);
    }
  }

  /**
   * `n` bytes of this direction were never seen (a hole in a capture, or bytes
   * a lagging decoder dropped): the unit in progress is reported cut, the gap
   * is named, and decoding resumes at the next plausible unit start.
   */
  gap(dir: Direction, n: number, t: number, why = 'bytes missing from the capture'): void {
    const s = this.dirs[dir];
    s.offset += n;
    this.stats.gapBytes += n;
    if (s.unit) {
      const u = s.unit;
      this.emitFacts(s, u, t, {
        code: 'TRUNCATED',
        message: `cut by a gap: ${u.got} of ${u.total} bytes seen`,
      });
      s.unit = null;
    }
    this.flushSkipped(s, t);
    s.pending = new Uint8Array(0);
    this.emit({
      t,
      dir,
      layer: this.layerOfFraming(),
      kind: 'gap',
      length: n,
      bytes: new Uint8Array(0),
      verdict: 'gap',
      code: 'TRUNCATED',
      message: why,
      summary: `gap: ${n} bytes ${why}`,
    });
    s.mode = 'resync';
    s.scanFrom = 0;
    s.skipReason = {
      code: 'TRUNCATED',
      message: 'the rest of a unit whose start fell in the gap',
      gap: false,
    };
  }

  /**
   * The stream ended in this direction: a unit in progress is reported
   * TRUNCATED, or as `cut` says when the caller knows why it never completed
   * (a reader that gave up on a silent peer: STARVED).
   */
  end(dir: Direction, t: number, cut?: { code: WireErrorCode; why: string }): void {
    const s = this.dirs[dir];
    if (s.unit) {
      const u = s.unit;
      this.emitFacts(s, u, t, {
        code: cut?.code ?? 'TRUNCATED',
        message: `${cut?.why ?? 'peer closed mid-frame'}: ${u.got} of ${u.total} bytes`,
      });
      s.unit = null;
    } else if (s.pending.length > 0 && s.mode === 'boundary') {
      this.emit({
        t,
        dir,
        layer: this.layerOfFraming(),
        kind: 'partial',
        length: s.pending.length,
        bytes: s.pending.slice(0, this.snapLen),
        verdict: 'undecodable',
        code: 'TRUNCATED',
        message: `peer closed mid-frame: ${s.pending.length} bytes of a header`,
        summary: 'partial header at close',
      });
    } else if (s.mode === 'resync') {
      s.skipped += s.pending.length;
    }
    s.pending = new Uint8Array(0);
    this.flushSkipped(s, t);
    s.mode = 'boundary';
  }

  private layerOfFraming(): UnitLayer {
    return this.framing === 'len' ? 'lenframe' : 'mux';
  }

  /** Classifies the unit starting at pending[0]; returns the bytes to process next. */
  private atBoundary(s: DirState, t: number): Uint8Array {
    const p = s.pending;
    if (p.length < 4) return new Uint8Array(0);
    const magic = readU32LE(p, 0);
    let layer: UnitLayer;
    let total: number;
    try {
      if (
        (magic === CHANNEL_MAGIC_DATA || magic === CHANNEL_MAGIC_CONTROL) &&
        s.dir === 'up' &&
        !this.sawMagic &&
        s.offset === p.length
      ) {
        layer = 'channelMagic';
        total = 4;
      } else if (
        magic === HANDSHAKE_MAGIC_RANK ||
        magic === CONTROL_HANDSHAKE_MAGIC_RANK ||
        magic === HANDSHAKE_MAGIC_CONTROLLER_ACK ||
        magic === CONTROL_HANDSHAKE_MAGIC_ACK
      ) {
        layer = 'handshake';
        if (magic === CONTROL_HANDSHAKE_MAGIC_RANK) {
          if (p.length < 8) return new Uint8Array(0);
          total = readU32LE(p, 4) >= 4 ? CONTROL_HANDSHAKE_V4_LEN : CONTROL_HANDSHAKE_LEN;
        } else
          total =
            magic === HANDSHAKE_MAGIC_RANK
              ? DATA_HANDSHAKE_LEN
              : magic === HANDSHAKE_MAGIC_CONTROLLER_ACK
                ? DATA_ACK_LEN
                : CONTROL_ACK_LEN;
      } else if (magic === MUX_RECORD_MAGIC && this.framing !== 'len') {
        checkMuxHeaderPrefix(p.subarray(0, Math.min(p.length, MUX_MAC_PREFIX_LEN)), this.ceiling);
        if (p.length < MUX_MAC_PREFIX_LEN) return new Uint8Array(0);
        layer = 'mux';
        total = MUX_HEADER_LEN + readU32LE(p, 13);
        this.framing = 'mux';
      } else if (this.framing === 'len') {
        layer = 'lenframe';
        total = 4 + checkLenPrefix(p.subarray(0, 4), this.ceiling);
      } else {
        return this.startResync(
          s,
          t,
          'BAD_MAGIC',
          `no flodl unit starts with 0x${magic.toString(16).padStart(8, '0')}`,
        );
      }
    } catch (e) {
      if (!isWireError(e)) throw e;
      return this.startResync(s, t, e.code, e.message);
    }
    s.unit = new UnitAssembly(
      layer,
      total,
      {
        mac: this.o.mac,
        ceiling: this.ceiling,
        controlVersion: this.o.controlVersion,
        indexTable: this.o.indexTable,
      },
      this.snapLen,
      this.wholeLimit,
    );
    s.mode = 'unit';
    s.pending = new Uint8Array(0);
    return p;
  }

  private startResync(s: DirState, t: number, code: WireErrorCode, message: string): Uint8Array {
    // The bytes are reported once resync finds the next unit start (or the stream ends).
    s.mode = 'resync';
    s.skipReason = { code, message, gap: false };
    s.skipHead = s.pending.slice(0, 64);
    s.scanFrom = 1;
    const p = s.pending;
    s.pending = new Uint8Array(0);
    return p;
  }

  /** Looks for a plausible unit start in pending; skipped bytes are counted. */
  private resync(s: DirState, t: number): Uint8Array {
    const p = s.pending;
    const last = p.length - RESYNC_LOOKAHEAD;
    const from = s.scanFrom;
    // On a mux stream only a record magic can start a unit: let the native search find it.
    const first =
      this.framing === 'mux'
        ? Buffer.from(p.buffer, p.byteOffset, p.length).indexOf(MUX_MAGIC_BYTES, from)
        : from;
    for (let i = first < 0 ? last + 1 : first; i <= last; i++) {
      if (this.plausibleStart(p, i)) {
        s.scanFrom = 0;
        if (this.framing === null && readU32LE(p, i) !== MUX_RECORD_MAGIC) this.framing = 'len';
        s.skipped += i;
        this.flushSkipped(s, t);
        s.mode = 'boundary';
        s.pending = new Uint8Array(0);
        return p.subarray(i);
      }
    }
    // Keep the tail that could still begin a unit; count the rest as skipped.
    if (last >= from) s.scanFrom = 0;
    const keep = Math.min(p.length, Math.max(RESYNC_LOOKAHEAD - 1, s.scanFrom ? p.length : 0));
    s.skipped += p.length - keep;
    s.pending = p.slice(p.length - keep);
    return new Uint8Array(0);
  }

  private plausibleStart(p: Uint8Array, i: number): boolean {
    // Byte arithmetic, not a DataView per call: this runs once per skipped byte.
    const m = u32(p, i);
    if (m === MUX_RECORD_MAGIC && this.framing !== 'len')
      return (
        u32(p, i + 4) === MUX_PROTOCOL_VERSION &&
        p[i + 8] >= 1 &&
        p[i + 8] <= 4 &&
        u32(p, i + 13) <= this.ceiling
      );
    if (this.framing === 'mux') return false;
    const inner = u32(p, i + 4);
    return m <= this.ceiling && m >= 8 && (inner === ROUND_FRAME_MAGIC || inner === CONTROL_FRAME_MAGIC);
  }

  private flushSkipped(s: DirState, t: number): void {
    if (s.skipped === 0) return;
    const r = s.skipReason ?? {
      code: 'BAD_PAYLOAD' as WireErrorCode,
      message: 'bytes between units',
      gap: false,
    };
    this.emit({
      t,
      dir: s.dir,
      layer: this.layerOfFraming(),
      kind: r.gap ? 'gap' : 'skipped',
      length: s.skipped,
      bytes: r.gap ? new Uint8Array(0) : s.skipHead.subarray(0, s.skipped),
      verdict: r.gap ? 'gap' : 'undecodable',
      code: r.code,
      message: r.message,
      summary: `${s.skipped} bytes skipped to the next unit boundary (${r.message})`,
    });
    if (r.gap) this.stats.gapBytes += s.skipped;
    s.skipped = 0;
    s.skipReason = null;
    s.skipHead = new Uint8Array(0);
  }

  private finishUnit(s: DirState, t: number): void {
    const u = s.unit!;
    s.unit = null;
    s.mode = 'boundary';
    let facts: UnitFacts;
    try {
      facts = u.finish();
    } catch (e) {
      facts = {
        kind: u.layer,
        verdict: 'BAD_PAYLOAD',
        message: `decoder error: ${(e as Error).message}`,
        summary: 'decoder error',
      };
    }
    if (u.layer === 'channelMagic') {
      this.sawMagic = true;
      this.channel = facts.channel === 'data' || facts.channel === 'control' ? facts.channel : this.channel;
    } else if (u.layer === 'handshake') {
      this.framing = 'len';
      this.channel ??= (facts.channel as 'data' | 'control' | undefined) ?? null;
      this.role ??= this.sawMagic ? 'direct' : 'loopback';
      if (facts.rank !== undefined) this.handshakeRank = facts.rank;
    } else if (u.layer === 'mux') {
      this.role ??= 'uplink';
      if (facts.hello) this.hello = facts.hello;
      if (!this.channel && (facts.kind === 'HostFrame' || facts.kind === 'Broadcast')) this.channel = 'data';
    } else if (u.layer === 'lenframe' && !this.channel) {
      this.channel = facts.kind === 'RoundFrame' ? 'data' : facts.kind === 'ControlFrame' ? 'control' : null;
    }
    this.emitFacts(
      s,
      u,
      t,
      facts.verdict === 'ok' ? null : { code: facts.verdict, message: facts.message ?? facts.verdict },
      facts,
    );
  }

  private emitFacts(
    s: DirState,
    u: UnitAssembly,
    t: number,
    bad: { code: WireErrorCode; message: string } | null,
    facts?: UnitFacts,
  ): void {
    const f = facts ?? {
      kind: cutKindOf(u.layer, u.bytes()),
      verdict: bad!.code,
      summary: `${u.layer} cut short`,
    };
    const { verdict: _v, ...rest } = f;
    this.emit({
      ...rest,
      t,
      dir: s.dir,
      layer: u.layer,
      length: u.total,
      bytes: u.bytes(),
      verdict: bad ? 'undecodable' : 'ok',
      code: bad?.code,
      message: bad?.message,
    });
  }

  private emit(u: DecodedUnit): void {
    this.stats.units++;
    if (u.verdict === 'undecodable') this.stats.undecodable++;
    this.o.onUnit(u);
  }
}
