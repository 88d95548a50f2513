// One trace line <-> one header or event. Validation is structural: enough
// that a reader can trust the types it hands on, with a named error naming
// the line and the field otherwise.
import {
  CONTROL_INDEX_TABLES,
  DEFAULT_CONTROL_INDEX_TABLE,
  isControlIndexTable,
} from '@shared/wire/control-msg-tables';
import { TraceError } from './errors';
import {
  TRACE_FORMAT,
  TRACE_VERSION,
  type LifecycleAction,
  type TraceEvent,
  type TraceHeader,
  type TraceLink,
} from './format';

const EVENT_TYPES = new Set(['record', 'round', 'finding', 'lifecycle', 'link', 'links', 'log', 'end']);
const UNIT_LAYERS = new Set(['channelMagic', 'handshake', 'lenframe', 'mux']);
const LIFECYCLE_ACTIONS: ReadonlySet<LifecycleAction> = new Set<LifecycleAction>([
  'start',
  'stop',
  'killRank',
  'pauseRank',
  'resumeRank',
  'killHost',
  'pauseRounds',
  'resumeRounds',
  'faultApplied',
  'faultCleared',
  'linkClosed',
]);
// One character class and a length check: a grouped pattern backtracks through the call stack
// and overflowed it on a unit captured whole (a 4 MiB HostFrame is 5.6 MB of base64).
const BASE64_CHARS = /^[A-Za-z0-9+/]*={0,2}$/;
const isBase64 = (text: string): boolean => text.length % 4 === 0 && BASE64_CHARS.test(text);

export function encodeHeaderLine(header: TraceHeader): string {
  return JSON.stringify(header) + '\n';
}

export function encodeEventLine(event: TraceEvent): string {
  return encodeEventLineParts(event).join('');
}

/**
 * An event's line in parts whose concatenation is encodeEventLine's: for a record, the JSON
 * before its bytes, the bytes' base64 (plain ASCII, which JSON never escapes) and the end. A
 * writer hands the base64 over as it is: JSON.stringify scanning it for escapes, measuring it
 * again and encoding it as UTF-8 cost the engine more than the base64 itself (a 64 KiB unit
 * is 87 KB of it).
 */
export function encodeEventLineParts(event: TraceEvent): string[] {
  if (event.type !== 'record') return [JSON.stringify(event) + '\n'];
  const { bytes, ...rest } = event;
  const head = JSON.stringify(rest);
  return [
    `${head.length > 2 ? `${head.slice(0, -1)},` : '{'}"bytes":"`,
    Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64'),
    '"}\n',
  ];
}

export function parseJson(text: string, line: number): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    // JSON.parse's message quotes the text it choked on: name the place, never the content
    // (the file may be anything this user can read, and the error goes to a window).
    const at = /position (\d+)/.exec((e as Error).message)?.[1];
    throw new TraceError('BAD_JSON', `not valid JSON${at ? ` (at byte ${at} of the line)` : ''}`, line);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new TraceError('BAD_EVENT', 'a line must be a JSON object', line);
  return v as Record<string, unknown>;
}

/** Field checks that throw BAD_EVENT naming the field. */
class Fields {
  constructor(
    private readonly obj: Record<string, unknown>,
    private readonly where: string,
    private readonly line: number,
  ) {}
  fail(field: string, want: string): never {
    throw new TraceError('BAD_EVENT', `${this.where}.${field} must be ${want}`, this.line);
  }
  num(field: string): number {
    const v = this.obj[field];
    if (typeof v !== 'number' || !Number.isFinite(v)) this.fail(field, 'a finite number');
    return v;
  }
  int(field: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
    const v = this.obj[field];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
      this.fail(field, `an integer in [${min}, ${max}]`);
    return v;
  }
  optInt(field: string, min = 0, max = Number.MAX_SAFE_INTEGER): void {
    if (this.obj[field] !== undefined) this.int(field, min, max);
  }
  str(field: string): string {
    const v = this.obj[field];
    if (typeof v !== 'string') this.fail(field, 'a string');
    return v;
  }
  oneOf(field: string, allowed: ReadonlySet<string>): string {
    const v = this.obj[field];
    if (typeof v !== 'string' || !allowed.has(v)) this.fail(field, `one of ${[...allowed].join(', ')}`);
    return v;
  }
  obj_(field: string): Record<string, unknown> {
    const v = this.obj[field];
    if (typeof v !== 'object' || v === null || Array.isArray(v)) this.fail(field, 'an object');
    return v as Record<string, unknown>;
  }
  arr(field: string): unknown[] {
    const v = this.obj[field];
    if (!Array.isArray(v)) this.fail(field, 'an array');
    return v;
  }
}

function checkLink(v: unknown, where: string, line: number): TraceLink {
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new TraceError('BAD_EVENT', `${where} must be an object`, line);
  const f = new Fields(v as Record<string, unknown>, where, line);
  f.str('id');
  f.oneOf('channel', new Set(['data', 'control']));
  f.oneOf('kind', new Set(['loopback', 'uplink']));
  f.str('from');
  f.str('to');
  // -1: a link seen from outside (a tap, a capture) whose host was never named (no Hello, no --name).
  f.int('host', -1);
  f.optInt('rank');
  f.str('clientAddr');
  f.str('serverAddr');
  f.int('clientPort', 0, 65535);
  f.int('serverPort', 0, 65535);
  return v as TraceLink;
}

export function decodeHeaderLine(text: string, line = 1): TraceHeader {
  let obj: Record<string, unknown>;
  try {
    obj = parseJson(text, line);
  } catch (e) {
    throw new TraceError(
      'NOT_A_TRACE',
      `the first line is not a relay-lab trace header (${(e as Error).message})`,
      line,
    );
  }
  if (obj.format !== TRACE_FORMAT)
    throw new TraceError('NOT_A_TRACE', `header.format must be '${TRACE_FORMAT}'`, line);
  const f = new Fields(obj, 'header', line);
  const version = f.int('version', 1);
  if (version > TRACE_VERSION) {
    throw new TraceError(
      'UNSUPPORTED_VERSION',
      `trace version ${version} is newer than this reader (${TRACE_VERSION})`,
      line,
    );
  }
  f.num('startedAt');
  if (!/^[0-9a-f]{32}$/.test(f.str('saltHex'))) f.fail('saltHex', '32 lowercase hex chars');
  const config = f.obj_('config');
  if (!Array.isArray(config.ranksPerHost)) f.fail('config.ranksPerHost', 'an array');
  // The control message index table decodes the trace's control frames: a trace written before
  // the setting existed spoke the v2 table.
  if (config.controlIndexTable === undefined) config.controlIndexTable = DEFAULT_CONTROL_INDEX_TABLE;
  else if (!isControlIndexTable(config.controlIndexTable))
    f.fail('config.controlIndexTable', `one of ${CONTROL_INDEX_TABLES.join(', ')}`);
  f.arr('links').forEach((l, i) => checkLink(l, `header.links[${i}]`, line));
  return obj as unknown as TraceHeader;
}

function decodeBytes(text: unknown, captured: number, line: number): Uint8Array {
  if (typeof text !== 'string' || !isBase64(text))
    throw new TraceError('BAD_BYTES', 'record.bytes must be base64', line);
  const buf = Buffer.from(text, 'base64');
  if (buf.length !== captured) {
    throw new TraceError(
      'BAD_BYTES',
      `record.bytes holds ${buf.length} bytes but record.captured says ${captured}`,
      line,
    );
  }
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
}

/** Checks a record event's `record` (its bytes aside); returns how many bytes it says were captured. */
export function checkRecordFields(obj: Record<string, unknown>, line: number): number {
  const rec = new Fields(new Fields(obj, 'event', line).obj_('record'), 'record', line);
  rec.int('seq');
  rec.num('t');
  rec.str('link');
  rec.oneOf('dir', new Set(['up', 'down']));
  rec.oneOf('layer', UNIT_LAYERS);
  rec.str('kind');
  const length = rec.int('length');
  const captured = rec.int('captured');
  if (captured > length) rec.fail('captured', `at most length (${length})`);
  rec.str('verdict');
  rec.str('summary');
  return captured;
}

export function decodeEventLine(text: string, line: number): TraceEvent {
  const obj = parseJson(text, line);
  const f = new Fields(obj, 'event', line);
  const type = f.oneOf('type', EVENT_TYPES);
  f.num('t');
  switch (type) {
    case 'record': {
      const captured = checkRecordFields(obj, line);
      return {
        ...(obj as unknown as TraceEvent & { type: 'record' }),
        bytes: decodeBytes(obj.bytes, captured, line),
      };
    }
    case 'round': {
      const r = new Fields(f.obj_('report'), 'report', line);
      r.int('round');
      r.arr('accepted');
      r.str('verdict');
      break;
    }
    case 'finding': {
      const r = new Fields(f.obj_('finding'), 'finding', line);
      r.int('id');
      r.str('kind');
      r.str('severity');
      r.str('message');
      break;
    }
    case 'lifecycle':
      f.oneOf('action', LIFECYCLE_ACTIONS);
      break;
    case 'link':
      checkLink(obj.link, 'link', line);
      break;
    case 'links':
      f.arr('links');
      break;
    case 'log':
      f.oneOf('level', new Set(['info', 'warn', 'error']));
      f.str('message');
      break;
    case 'end':
      f.int('records');
      f.int('events');
      break;
  }
  return obj as unknown as TraceEvent;
}
