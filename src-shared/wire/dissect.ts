// The dissector: for any bytes claimed to be a unit of some layer, a tree of
// fields with byte offsets and lengths (header fields, then nested payloads:
// a HostFrame's RoundFrame and its tensors, a Data record's ControlFrame and
// its message) and a verdict with the stable code of the real decoder.
// Used by the app's inspector and `relay-lab decode`. Never throws: a short
// or malformed unit yields the fields that exist plus a failing verdict.
import { channelOfMagic } from './channel';
import {
  CONTROL_HANDSHAKE_MAGIC_ACK,
  CONTROL_HANDSHAKE_MAGIC_RANK,
  DEFAULT_FRAME_CEILING,
  HANDSHAKE_MAGIC_CONTROLLER_ACK,
  HANDSHAKE_MAGIC_RANK,
  MUX_HEADER_LEN,
} from './constants';
import { MSG_KIND_CONTROL, MSG_KIND_NAMES, MSG_KIND_TIMING } from './control-frame';
import { DEFAULT_CONTROL_INDEX_TABLE, type ControlIndexTable } from './control-msg-tables';
import { messageFields, relayControlFields } from './dissect-msg';
import { Walker, hex32, preview, shift, type Field } from './dissect-walker';
import { isWireError, type WireErrorCode } from './errors';
import { nobleMac, type Mac } from './mac';
import { muxHeaderHints, muxKindOfByte } from './mux';
import { nestedLayerOf } from './nested';
import { dtypeName } from './tensor';
import { decodeUnit, roundFrameTrailingNote, type Layer } from './units-json';

export type { Field } from './dissect-walker';

export interface Dissection {
  layer: Layer;
  /** What the bytes are: 'Data', 'HostFrame', 'RoundFrame', 'ControlFrame', 'LenFrame', 'data handshake', ... */
  kind: string;
  fields: Field[];
  verdict: 'ok' | WireErrorCode;
  message?: string;
  /** flodl's own text for the rejection, where flodl's source words it. */
  flodlMessage?: string;
  /**
   * Information that is not the verdict: what a prefix already shows (flodl
   * itself judges a mux header only at its 25th byte), bytes flodl ignores
   * after a footer or a message, fields whose type WIRE.md does not give.
   */
  notes?: string[];
  /**
   * Set only when the dissector's own walk threw (a lab bug, never a verdict
   * on the bytes): what it threw. The tree then holds one field named
   * DISSECTOR_FAILURE_FIELD. A message field flodl names `error`
   * (CheckpointResult.error) is a field like any other.
   */
  failure?: string;
  /** The dissection of a nested unit (a mux payload, a len-framed blob), offsets relative to it. */
  inner?: Dissection;
  /** Byte offset of `inner` within this unit. */
  innerOffset?: number;
}

export interface DissectOptions {
  salt?: Uint8Array;
  mac?: Mac;
  ceiling?: number;
  controlVersion?: number;
  /** The ControlFrame message index table (default v2). */
  indexTable?: ControlIndexTable;
}

/**
 * The name of the one field of a tree whose walk threw. Not `error`: that is a
 * flodl field name (TimingMsgWire CheckpointResult.error, type not given in
 * WIRE.md 3.5), and a reader telling the dissector's failure by that name
 * took a well-formed CheckpointResult for a dissector crash.
 */
export const DISSECTOR_FAILURE_FIELD = 'dissector failure';

type Body = Omit<Dissection, 'verdict' | 'message' | 'flodlMessage' | 'layer'>;

function verdictOf(
  layer: Layer,
  bytes: Uint8Array,
  mac: Mac,
  opts: DissectOptions,
): Pick<Dissection, 'verdict' | 'message' | 'flodlMessage'> {
  try {
    decodeUnit(layer, bytes, mac, {
      ceiling: opts.ceiling,
      controlVersion: opts.controlVersion,
      indexTable: opts.indexTable,
    });
    return { verdict: 'ok' };
  } catch (e) {
    if (isWireError(e))
      return e.flodlMessage
        ? { verdict: e.code, message: e.message, flodlMessage: e.flodlMessage }
        : { verdict: e.code, message: e.message };
    return { verdict: 'BAD_PAYLOAD', message: e instanceof Error ? e.message : String(e) };
  }
}

function dissectMux(bytes: Uint8Array, mac: Mac, opts: DissectOptions): Body {
  const w = new Walker(bytes);
  w.field('magic', 4, (a) => hex32(w.u32(a)));
  w.field('version', 4, (a) => String(w.u32(a)));
  const k = w.field('kind', 1, (a) => `${w.u8(a)} (${muxKindOfByte(w.u8(a)) ?? 'unknown'})`);
  const kind = k >= 0 ? (muxKindOfByte(w.u8(k)) ?? `kind 0x${w.u8(k).toString(16)}`) : 'MuxRecord';
  w.field('rank', 4, (a) => String(w.u32(a)));
  const l = w.field('payload_len', 4, (a) => String(w.u32(a)));
  w.field('auth_tag', 8, (a) => w.hex(a, 8));
  const out: Body = { kind, fields: w.fields };
  if (bytes.length < MUX_HEADER_LEN) {
    const hints = muxHeaderHints(bytes, opts.ceiling ?? DEFAULT_FRAME_CEILING);
    out.notes = [
      `header incomplete: ${bytes.length} of ${MUX_HEADER_LEN} bytes; flodl waits for the rest (peer closed mid-frame if the stream ends, STARVED after 60 s without a byte)`,
      ...hints,
    ];
  }
  if (l < 0 || w.truncated) return out;
  const declared = w.u32(l);
  const payload = bytes.subarray(
    MUX_HEADER_LEN,
    Math.min(bytes.length, MUX_HEADER_LEN + Math.min(declared, opts.ceiling ?? DEFAULT_FRAME_CEILING)),
  );
  const pf: Field = {
    name: 'payload',
    offset: MUX_HEADER_LEN,
    length: payload.length,
    value: payload.length < declared ? `truncated: ${payload.length} of ${declared} bytes` : preview(payload),
  };
  w.fields.push(pf);
  if (bytes.length > MUX_HEADER_LEN + declared) {
    w.fields.push({
      name: 'trailing',
      offset: MUX_HEADER_LEN + declared,
      length: bytes.length - MUX_HEADER_LEN - declared,
      value: preview(bytes.subarray(MUX_HEADER_LEN + declared)),
    });
  }
  // A unit captured short (snap length) still shows its nested header fields
  // as far as the kept bytes go; only a relay Control message needs it whole.
  if (payload.length < declared && kind === 'Control') return out;
  if (kind === 'Control') {
    const notes: string[] = [];
    pf.children = relayControlFields(payload, MUX_HEADER_LEN, notes);
    if (notes.length) out.notes = [...(out.notes ?? []), ...notes];
  } else if (payload.length >= 4) {
    const innerLayer = nestedLayerOf(payload);
    if (innerLayer) {
      out.inner = dissectUnit(innerLayer, payload, mac, opts);
      out.innerOffset = MUX_HEADER_LEN;
      pf.children = shift(out.inner.fields, MUX_HEADER_LEN);
    }
  }
  return out;
}

function dissectRoundFrame(bytes: Uint8Array, opts: DissectOptions): Body {
  const w = new Walker(bytes);
  w.field('magic', 4, (a) => hex32(w.u32(a)));
  const n = w.field('num_tensors', 4, (a) => String(w.u32(a)));
  w.field(
    'round_kind',
    1,
    (a) => `${w.u8(a)} (${w.u8(a) === 0 ? 'Model' : w.u8(a) === 1 ? 'Control' : 'invalid'})`,
  );
  w.field('weight', 8, (a) => String(w.f64(a)));
  const out: Body = { kind: 'RoundFrame', fields: w.fields };
  if (n < 0 || w.truncated) return out;
  const count = w.u32(n);
  // Never walk more entries than the limit or than the bytes could hold (10 bytes minimum each).
  const limit = Math.min(count, 65_536, Math.floor((bytes.length - w.pos) / 10));
  const ceiling = opts.ceiling ?? DEFAULT_FRAME_CEILING;
  let cumulative = 0n;
  for (let i = 0; i < limit && !w.truncated; i++) {
    const start = w.pos;
    const children: Field[] = [];
    const t: Field = { name: `tensor[${i}]`, offset: start, length: 0, value: '', children };
    w.fields.push(t);
    const d = w.field('dtype', 1, (a) => `${w.u8(a)} (${dtypeName(w.u8(a))})`, children);
    const nd = w.field('ndim', 1, (a) => String(w.u8(a)), children);
    let dims: number[] = [];
    if (nd >= 0) {
      const ndim = w.u8(nd);
      const dd = w.field(
        'dims',
        4 * ndim,
        (a) => `[${Array.from({ length: ndim }, (_, j) => w.u32(a + 4 * j)).join(', ')}]`,
        children,
      );
      if (dd >= 0) dims = Array.from({ length: ndim }, (_, j) => w.u32(dd + 4 * j));
    }
    const nb = w.field('nbytes', 8, (a) => String(w.u64(a)), children);
    if (nb >= 0) {
      const nbytes = w.u64(nb);
      cumulative += nbytes;
      const elided = nbytes === 0n && dims.reduce((x, y) => x * y, 1) > 0;
      if (cumulative > BigInt(ceiling)) {
        children.push({
          name: 'data',
          offset: w.pos,
          length: 0,
          value: `cumulative nbytes ${cumulative} exceeds the frame ceiling`,
        });
        w.truncated = true;
      } else {
        const len = Number(nbytes);
        w.field(
          'data',
          len,
          (a) => (elided ? 'elided (all zeros)' : preview(bytes.subarray(a, a + len))),
          children,
        );
      }
      t.value = `${d >= 0 ? dtypeName(w.u8(d)) : '?'} [${dims.join(', ')}]${elided ? ' elided' : ''}`;
    }
    t.length = w.pos - start;
  }
  if (!w.truncated && count <= limit) {
    w.field('footer', 8, (a) => w.hex(a, 8));
    const t = w.rest('trailing', (b) => `${preview(b)} (ignored by flodl's RoundFrame reader)`);
    if (t) out.notes = [roundFrameTrailingNote(t.length)];
  }
  return out;
}

function dissectControlFrame(bytes: Uint8Array, opts: DissectOptions): Body {
  const w = new Walker(bytes);
  w.field('magic', 4, (a) => hex32(w.u32(a)));
  w.field('version', 4, (a) => String(w.u32(a)));
  w.field('auth_tag', 8, (a) => w.hex(a, 8));
  const k = w.field('msg_kind', 4, (a) => `${w.u32(a)} (${MSG_KIND_NAMES[w.u32(a)] ?? 'unknown MsgKind'})`);
  const l = w.field('payload_len', 4, (a) => String(w.u32(a)));
  const out: Body = {
    kind: k >= 0 ? `ControlFrame ${MSG_KIND_NAMES[w.u32(k)] ?? ''}`.trim() : 'ControlFrame',
    fields: w.fields,
  };
  if (l < 0) return out;
  const len = w.u32(l);
  const p = w.field('payload', len, (a) => preview(bytes.subarray(a, a + len)));
  if (p >= 0) {
    const payload = bytes.subarray(p, p + len);
    const kind = w.u32(k);
    const family =
      kind === MSG_KIND_CONTROL ? 'ControlMsgWire' : kind === MSG_KIND_TIMING ? 'TimingMsgWire' : null;
    if (family) {
      const notes: string[] = [];
      w.fields[w.fields.length - 1].children = messageFields(
        family,
        payload,
        p,
        opts.indexTable ?? DEFAULT_CONTROL_INDEX_TABLE,
        notes,
      );
      if (notes.length) out.notes = notes;
    }
    w.rest('trailing', (b) => preview(b));
  }
  return out;
}

function dissectLenFrame(bytes: Uint8Array, mac: Mac, opts: DissectOptions): Body {
  const w = new Walker(bytes);
  const l = w.field('len', 4, (a) => String(w.u32(a)));
  const out: Body = { kind: 'LenFrame', fields: w.fields };
  if (l < 0) return out;
  const len = w.u32(l);
  if (len > (opts.ceiling ?? DEFAULT_FRAME_CEILING)) {
    w.fields.push({
      name: 'blob',
      offset: 4,
      length: bytes.length - 4,
      value: `length ${len} exceeds the frame ceiling`,
    });
    return out;
  }
  const b = w.field('blob', len, (a) => preview(bytes.subarray(a, a + len)));
  // A blob captured short is still dissected as far as its kept bytes go.
  const blob = b >= 0 ? bytes.subarray(b, b + len) : bytes.subarray(4);
  const innerLayer = nestedLayerOf(blob);
  if (innerLayer) {
    out.inner = dissectUnit(innerLayer, blob, mac, opts);
    out.innerOffset = 4;
    w.fields[w.fields.length - 1].children = shift(out.inner.fields, 4);
  }
  if (b >= 0) w.rest('trailing', (r) => preview(r));
  return out;
}

function dissectHandshake(bytes: Uint8Array): Body {
  const w = new Walker(bytes);
  const m = w.field('magic', 4, (a) => hex32(w.u32(a)));
  const magic = m >= 0 ? w.u32(m) : -1;
  const kind =
    magic === HANDSHAKE_MAGIC_RANK
      ? 'data handshake'
      : magic === HANDSHAKE_MAGIC_CONTROLLER_ACK
        ? 'data ack'
        : magic === CONTROL_HANDSHAKE_MAGIC_RANK
          ? 'control handshake'
          : magic === CONTROL_HANDSHAKE_MAGIC_ACK
            ? 'control ack'
            : m >= 0 && channelOfMagic(bytes.subarray(0, 4))
              ? `${channelOfMagic(bytes.subarray(0, 4))} channel magic`
              : 'handshake';
  w.field('version', 4, (a) => String(w.u32(a)));
  if (magic === HANDSHAKE_MAGIC_RANK || magic === CONTROL_HANDSHAKE_MAGIC_RANK) {
    w.field('rank', 4, (a) => String(w.u32(a)));
    w.field('world_size', 4, (a) => String(w.u32(a)));
  }
  if (magic === CONTROL_HANDSHAKE_MAGIC_RANK || magic === CONTROL_HANDSHAKE_MAGIC_ACK)
    w.field('auth_tag', 8, (a) => w.hex(a, 8));
  w.rest('trailing', (b) => preview(b));
  return { kind, fields: w.fields };
}

function dissectUnit(layer: Layer, bytes: Uint8Array, mac: Mac, opts: DissectOptions): Dissection {
  let body: Body;
  try {
    switch (layer) {
      case 'mux':
        body = dissectMux(bytes, mac, opts);
        break;
      case 'roundframe':
        body = dissectRoundFrame(bytes, opts);
        break;
      case 'controlframe':
        body = dissectControlFrame(bytes, opts);
        break;
      case 'lenframe':
        body = dissectLenFrame(bytes, mac, opts);
        break;
      case 'handshake':
        body = dissectHandshake(bytes);
        break;
      default:
        body = { kind: 'unknown', fields: [] };
    }
  } catch (e) {
    // The walk is written not to throw; this keeps the promise if it ever does.
    body = {
      kind: 'unknown',
      fields: [{ name: DISSECTOR_FAILURE_FIELD, offset: 0, length: bytes.length, value: String(e) }],
      failure: String(e),
    };
  }
  attachKeys(layer, body.fields);
  if (!body.failure && body.inner?.failure) body.failure = body.inner.failure;
  const innerNotes = body.inner?.notes ?? [];
  if (innerNotes.length)
    body.notes = [...(body.notes ?? []), ...innerNotes.filter((n) => !body.notes?.includes(n))];
  return { layer, ...body, ...verdictOf(layer, bytes, mac, opts) };
}

const LAYER_PREFIX: Record<Layer, string> = {
  mux: 'mux',
  roundframe: 'rf',
  controlframe: 'cf',
  lenframe: 'len',
  handshake: 'hs',
};

/** The filter name of a message field: 'variant' and an undecodable 'msg' are the message itself. */
function messageKey(prefix: 'ctl' | 'relay', name: string): string {
  if (name === 'variant' || name === 'msg') return `${prefix}.msg`;
  if (name.startsWith('trailing')) return `${prefix}.trailing`;
  return `${prefix}.${name}`;
}

/**
 * Gives each field its filter name (the key of its explanation in
 * src-shared/explain). Fields of a nested unit were keyed by its own
 * dissection and keep their keys.
 */
function attachKeys(layer: Layer, fields: Field[]): void {
  const prefix = LAYER_PREFIX[layer] ?? 'lab';
  for (const f of fields) {
    if (f.key) continue;
    if (f.name === DISSECTOR_FAILURE_FIELD) f.key = 'lab.error';
    else if (layer === 'roundframe' && f.name.startsWith('tensor[')) {
      f.key = 'rf.tensor';
      for (const c of f.children ?? []) c.key = `rf.tensor.${c.name}`;
    } else f.key = `${prefix}.${f.name}`;
    const sub = layer === 'mux' ? 'relay' : layer === 'controlframe' ? 'ctl' : null;
    if (sub && f.name === 'payload')
      for (const c of f.children ?? []) if (!c.key) c.key = messageKey(sub, c.name);
  }
}

/** Dissects `bytes` as a unit of `layer`. Never throws. */
export function dissect(layer: Layer, bytes: Uint8Array, opts: DissectOptions = {}): Dissection {
  const mac = opts.mac ?? nobleMac(opts.salt ?? new Uint8Array(16));
  return dissectUnit(layer, bytes, mac, opts);
}
