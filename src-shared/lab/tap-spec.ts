// A live tap as a person writes it (`npm start -- --tap [ADDR:]PORT=HOST:PORT[@NAME]`)
// and as the window sends it (the "Tap a cluster" dialog): parsed and checked
// once here, for the launch flags and for the commands from an untrusted side.
import type { TapSpec } from './contract';
import { isPlainObject } from './field-checks';
import { parseSessionSalt } from './session-salt';

export class TapSpecError extends Error {
  override readonly name = 'TapSpecError';
  readonly code = 'BAD_TAP';
  constructor(
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

/** A host name or an IPv4/IPv6 literal; no scheme, path or spaces. */
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[?[0-9A-Fa-f:.]{2,45}\]?)$/;
/** A link name prefix such as h0.uplink (the channel is appended). */
export const TAP_NAME = /^[\w.-]{1,48}$/;
/** At most this many taps at once (one per host uplink and channel of a large cluster). */
export const MAX_TAPS = 64;

function port(v: unknown, field: string, allowZero: boolean): number {
  const n = typeof v === 'string' && /^\d{1,5}$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < (allowZero ? 0 : 1) || n > 65535)
    throw new TapSpecError(`${field} must be a port number ${allowZero ? '0' : '1'}..65535`, field);
  return n;
}

function host(v: unknown, field: string): string {
  if (typeof v !== 'string' || !HOST.test(v))
    throw new TapSpecError(`${field} must be a host name or an IP address, got '${String(v)}'`, field);
  return v.replace(/^\[|\]$/g, '');
}

/** `[ADDR:]PORT` (ADDR default 127.0.0.1; `[::1]:PORT` for IPv6). */
export function parseListen(text: string, field = 'listen'): { host: string; port: number } {
  const m = /^(?:(.+):)?(\d{1,5})$/.exec(text.trim());
  if (!m) throw new TapSpecError(`${field} must be [ADDR:]PORT, got '${text}'`, field);
  return { host: m[1] === undefined ? '127.0.0.1' : host(m[1], field), port: port(m[2], field, true) };
}

/** `HOST:PORT`. */
export function parseUpstream(text: string, field = 'upstream'): { host: string; port: number } {
  const m = /^(.+):(\d{1,5})$/.exec(text.trim());
  if (!m) throw new TapSpecError(`${field} must be HOST:PORT, got '${text}'`, field);
  return { host: host(m[1], field), port: port(m[2], field, false) };
}

/**
 * One `--tap` value: `[ADDR:]PORT=HOST:PORT[@NAME]`, e.g. `7001=10.0.0.5:7000@h0.uplink`.
 * Several taps: repeat the flag or separate them with commas.
 */
export function parseTapFlag(text: string, saltHex: string): TapSpec[] {
  return text
    .split(',')
    .filter((p) => p.trim() !== '')
    .map((part) => {
      const at = part.indexOf('@');
      const body = at >= 0 ? part.slice(0, at) : part;
      const name = at >= 0 ? part.slice(at + 1) : undefined;
      const eq = body.indexOf('=');
      if (eq < 0) throw new TapSpecError(`--tap takes [ADDR:]PORT=HOST:PORT[@NAME], got '${part}'`, 'tap');
      const listen = parseListen(body.slice(0, eq), 'tap');
      const upstream = parseUpstream(body.slice(eq + 1), 'tap');
      return validateTapSpec({
        listenHost: listen.host,
        listenPort: listen.port,
        upstreamHost: upstream.host,
        upstreamPort: upstream.port,
        saltHex,
        ...(name !== undefined ? { name } : {}),
      });
    });
}

/** `--tap` values (each may list several, comma-separated) with the one `--salt` they share. */
export function tapsOfFlags(flags: readonly string[], salt: string | undefined): TapSpec[] {
  if (flags.length === 0) {
    if (salt !== undefined) throw new TapSpecError('--salt is for --tap (the cluster being tapped)', 'salt');
    return [];
  }
  if (salt === undefined)
    throw new TapSpecError("--tap needs --salt HEX: the tapped cluster's session salt", 'salt');
  return flags.flatMap((f) => parseTapFlag(f, salt));
}

/** Checks an untrusted TapSpec and rebuilds it field by field. */
export function validateTapSpec(v: unknown, where = 'tap'): TapSpec {
  if (!isPlainObject(v)) throw new TapSpecError(`${where} must be an object`, where);
  for (const k of Object.keys(v))
    if (!['listenHost', 'listenPort', 'upstreamHost', 'upstreamPort', 'saltHex', 'name'].includes(k))
      throw new TapSpecError(`${where}.${k} is not a field of a tap`, `${where}.${k}`);
  const saltHex = saltHexOf(v.saltHex, `${where}.saltHex`);
  const spec: TapSpec = {
    listenHost: host(v.listenHost, `${where}.listenHost`),
    listenPort: port(v.listenPort, `${where}.listenPort`, true),
    upstreamHost: host(v.upstreamHost, `${where}.upstreamHost`),
    upstreamPort: port(v.upstreamPort, `${where}.upstreamPort`, false),
    saltHex,
  };
  if (v.name !== undefined && v.name !== '') {
    if (typeof v.name !== 'string' || !TAP_NAME.test(v.name))
      throw new TapSpecError(
        `${where}.name must be letters, digits, '.', '_' or '-' (at most 48), e.g. h0.uplink`,
        `${where}.name`,
      );
    spec.name = v.name;
  }
  return spec;
}

/** The session salt in flodl's salt_from_hex rules, as lowercase hex, or TapSpecError naming `field`. */
export function saltHexOf(v: unknown, field: string): string {
  if (typeof v !== 'string' || v.length > 256)
    throw new TapSpecError(`${field} must be the session salt (hex)`, field);
  try {
    return parseSessionSalt(v, field).hex;
  } catch (e) {
    throw new TapSpecError((e as Error).message, field);
  }
}
