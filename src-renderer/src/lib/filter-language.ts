// The records filter: a small field language in the spirit of Wireshark's
// display filters.
//
//   expr    := or
//   or      := and (('||' | 'or') and)*
//   and     := unary (('&&' | 'and') unary)*
//   unary   := ('!' | 'not') unary | '(' expr ')' | test
//   test    := field [op value]          (a bare field is true when present / non-zero)
//   op      := == | != | < | <= | > | >= | contains
//   value   := number | word | "quoted string"
//
// Examples: `kind == HostFrame && host == h1`, `rank == 3`, `verdict != ok`,
// `mux.kind == HostFrame`, `rf.weight > 0`, `ctl.msg == Heartbeat` (the dissector's names),
// `len > 1000 and not dir == down`, `short` (captured short of its length).
import type { UnitRecord } from '@shared/lab/records';
import { WIRE_FILTER_FIELDS } from './wire-filter-fields';

export class FilterError extends Error {
  override readonly name = 'FilterError';
  constructor(
    message: string,
    /** Character offset in the filter text where the problem is. */
    readonly at: number,
  ) {
    super(message);
  }
}

type FieldKind = 'number' | 'string' | 'boolean';
interface FieldDef {
  kind: FieldKind;
  get: (r: UnitRecord) => number | string | boolean | undefined;
}

const FIELDS: Record<string, FieldDef> = {
  seq: { kind: 'number', get: (r) => r.seq },
  t: { kind: 'number', get: (r) => r.t },
  time: { kind: 'number', get: (r) => r.t },
  link: { kind: 'string', get: (r) => r.link },
  dir: { kind: 'string', get: (r) => r.dir },
  layer: { kind: 'string', get: (r) => r.layer },
  kind: { kind: 'string', get: (r) => r.kind },
  host: { kind: 'number', get: (r) => r.host },
  rank: { kind: 'number', get: (r) => r.rank },
  round: { kind: 'number', get: (r) => r.round },
  len: { kind: 'number', get: (r) => r.length },
  length: { kind: 'number', get: (r) => r.length },
  captured: { kind: 'number', get: (r) => r.captured },
  verdict: { kind: 'string', get: (r) => r.verdict },
  summary: { kind: 'string', get: (r) => r.summary },
  short: { kind: 'boolean', get: (r) => r.captured < r.length },
  // The dissector's names (mux.kind, rf.weight, ctl.msg, ...), as the inspector shows them.
  ...WIRE_FILTER_FIELDS,
};

export const FILTER_FIELDS = Object.keys(FIELDS);

type Op = '==' | '!=' | '<' | '<=' | '>' | '>=' | 'contains';
type Token =
  | { t: 'op'; v: Op; at: number }
  | { t: 'and' | 'or' | 'not' | '(' | ')'; at: number }
  | { t: 'word'; v: string; at: number }
  | { t: 'string'; v: string; at: number }
  | { t: 'end'; at: number };

function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const two = src.slice(i, i + 2);
    if (two === '&&' || two === '||') {
      out.push({ t: two === '&&' ? 'and' : 'or', at: i });
      i += 2;
    } else if (two === '==' || two === '!=' || two === '<=' || two === '>=') {
      out.push({ t: 'op', v: two, at: i });
      i += 2;
    } else if (c === '<' || c === '>') {
      out.push({ t: 'op', v: c, at: i });
      i++;
    } else if (c === '!') {
      out.push({ t: 'not', at: i });
      i++;
    } else if (c === '(' || c === ')') {
      out.push({ t: c, at: i });
      i++;
    } else if (c === '"' || c === "'") {
      const end = src.indexOf(c, i + 1);
      if (end < 0) throw new FilterError('unterminated string', i);
      out.push({ t: 'string', v: src.slice(i + 1, end), at: i });
      i = end + 1;
    } else if (c === '=') {
      throw new FilterError("use '==' to compare", i);
    } else if (/[A-Za-z0-9_.\-:]/.test(c)) {
      const m = /^[A-Za-z0-9_.\-:]+/.exec(src.slice(i))!;
      const w = m[0];
      const lower = w.toLowerCase();
      if (lower === 'and' || lower === 'or' || lower === 'not') out.push({ t: lower, at: i });
      else if (lower === 'contains') out.push({ t: 'op', v: 'contains', at: i });
      else if (lower === 'eq' || lower === 'ne')
        out.push({ t: 'op', v: lower === 'eq' ? '==' : '!=', at: i });
      else out.push({ t: 'word', v: w, at: i });
      i += w.length;
    } else {
      throw new FilterError(`unexpected character '${c}'`, i);
    }
  }
  out.push({ t: 'end', at: src.length });
  return out;
}

export type RecordFilter = (r: UnitRecord) => boolean;

/** Parses a filter; an empty text matches everything. Throws FilterError with a position. */
export function compileFilter(text: string): RecordFilter {
  if (text.trim() === '') return () => true;
  const toks = tokenize(text);
  let p = 0;
  const peek = () => toks[p];
  const next = () => toks[p++];

  const parseOr = (): RecordFilter => {
    let left = parseAnd();
    while (peek().t === 'or') {
      next();
      const a = left;
      const b = parseAnd();
      left = (r) => a(r) || b(r);
    }
    return left;
  };
  const parseAnd = (): RecordFilter => {
    let left = parseUnary();
    while (peek().t === 'and') {
      next();
      const a = left;
      const b = parseUnary();
      left = (r) => a(r) && b(r);
    }
    return left;
  };
  const parseUnary = (): RecordFilter => {
    const tok = peek();
    if (tok.t === 'not') {
      next();
      const inner = parseUnary();
      return (r) => !inner(r);
    }
    if (tok.t === '(') {
      next();
      const inner = parseOr();
      const close = next();
      if (close.t !== ')') throw new FilterError("expected ')'", close.at);
      return inner;
    }
    return parseTest();
  };
  const parseTest = (): RecordFilter => {
    const tok = next();
    if (tok.t === 'end') throw new FilterError('expected a field name', tok.at);
    if (tok.t !== 'word')
      throw new FilterError(
        `expected a field name, found '${text.slice(tok.at, tok.at + 8).trim()}'`,
        tok.at,
      );
    const def = FIELDS[tok.v.toLowerCase()];
    if (!def) throw new FilterError(`unknown field '${tok.v}' (fields: ${FILTER_FIELDS.join(', ')})`, tok.at);
    const fieldName = tok.v.toLowerCase();
    if (peek().t !== 'op') {
      return (r) => {
        const v = def.get(r);
        return v !== undefined && v !== false && v !== 0 && v !== '';
      };
    }
    const opTok = next() as Extract<Token, { t: 'op' }>;
    const valTok = next();
    if (valTok.t !== 'word' && valTok.t !== 'string')
      throw new FilterError(`expected a value after '${opTok.v}'`, valTok.at);
    return makeTest(fieldName, def, opTok.v, valTok.v, valTok.at, opTok.at);
  };

  const result = parseOr();
  const rest = peek();
  if (rest.t !== 'end') throw new FilterError(`unexpected '${text.slice(rest.at).split(/\s/)[0]}'`, rest.at);
  return result;
}

function makeTest(
  name: string,
  def: FieldDef,
  op: Op,
  raw: string,
  valueAt: number,
  opAt: number,
): RecordFilter {
  if (def.kind === 'number') {
    // Hosts may be named as they are shown: h1.
    const text =
      name === 'host' && /^h\d+$/i.test(raw)
        ? raw.slice(1)
        : name === 'rank' && /^r\d+$/i.test(raw)
          ? raw.slice(1)
          : raw;
    const n = Number(text);
    if (text === '' || !Number.isFinite(n))
      throw new FilterError(`'${name}' takes a number, not '${raw}'`, valueAt);
    if (op === 'contains')
      throw new FilterError(`'contains' needs a text field, and '${name}' is a number`, opAt);
    return (r) => {
      const v = def.get(r) as number | undefined;
      if (v === undefined) return op === '!=';
      return compare(v, n, op);
    };
  }
  if (def.kind === 'boolean') {
    const want = raw.toLowerCase();
    if (want !== 'true' && want !== 'false') throw new FilterError(`'${name}' is true or false`, valueAt);
    if (op !== '==' && op !== '!=') throw new FilterError(`'${name}' only compares with == or !=`, opAt);
    return (r) => (def.get(r) === (want === 'true')) === (op === '==');
  }
  if (op !== '==' && op !== '!=' && op !== 'contains')
    throw new FilterError(`'${op}' needs a number field, and '${name}' is text`, opAt);
  const needle = raw.toLowerCase();
  return (r) => {
    const v = def.get(r);
    if (v === undefined) return op === '!=';
    const s = String(v).toLowerCase();
    if (op === 'contains') return s.includes(needle);
    return (s === needle) === (op === '==');
  };
}

function compare(a: number, b: number, op: Op): boolean {
  switch (op) {
    case '==':
      return a === b;
    case '!=':
      return a !== b;
    case '<':
      return a < b;
    case '<=':
      return a <= b;
    case '>':
      return a > b;
    case '>=':
      return a >= b;
    default:
      return false;
  }
}

/** Compiles without throwing: the error (with its position) for the filter box to show as you type. */
export function tryCompileFilter(
  text: string,
): { filter: RecordFilter; error: null } | { filter: null; error: FilterError } {
  try {
    return { filter: compileFilter(text), error: null };
  } catch (e) {
    if (e instanceof FilterError) return { filter: null, error: e };
    throw e;
  }
}
