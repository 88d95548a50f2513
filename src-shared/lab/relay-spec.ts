// flodl's relay launch contract (WIRE.md 2.2, 4.2; the launcher's run_relay):
// a relay process gets one environment variable holding the lowercase hex of
// the JSON RelaySpec. The lab writes it for an external relay (a flodl build
// or any command) and its own `relay --from-env` reads it, both through here,
// so the two ends cannot drift apart.
import { utf8Decode, utf8Encode } from '../wire/utf8';
import { SaltError, parseSessionSalt } from './session-salt';

/** The variable flodl 0.7 reads, and the one older builds read. */
export const RELAY_SPEC_ENV = 'FLODL_INTERNAL_RELAY_JSON';
export const RELAY_SPEC_ENV_OLD = 'FLODL_RELAY_JSON';
/** flodl's loopback offsets from controller_port (RELAY_DATA/CONTROL_LOOPBACK_OFFSET). */
export const RELAY_DATA_OFFSET = 4;
export const RELAY_CONTROL_OFFSET = 5;

/** RelaySpec as flodl serializes it (serde field names). */
export interface RelaySpecJson {
  host: string;
  controller_host: string;
  controller_port: number;
  ranks: number[];
  salt_hex: string;
  world_size: number;
  data_channel: boolean;
  /** serde default 0 = unset. */
  frame_ceiling_bytes: number;
}

export class RelaySpecError extends Error {
  override readonly name = 'RelaySpecError';
  readonly code = 'BAD_RELAY_SPEC';
}

const isU32 = (v: unknown): v is number =>
  Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 0xffffffff;

/** The variable's value: lowercase hex of the spec's JSON (UTF-8). */
export function encodeRelaySpec(spec: RelaySpecJson): string {
  const bytes = utf8Encode(JSON.stringify(spec));
  let out = '';
  for (const b of bytes) out += b.toString(16).padStart(2, '0');
  return out;
}

/** Which variable holds the spec (the current name first), or undefined when neither is set. */
export function relaySpecFromEnv(
  env: Readonly<Record<string, string | undefined>>,
): { name: string; value: string } | undefined {
  for (const name of [RELAY_SPEC_ENV, RELAY_SPEC_ENV_OLD]) {
    const value = env[name];
    if (value !== undefined && value !== '') return { name, value };
  }
  return undefined;
}

/** Decodes and checks a spec as flodl does; every fault is a RelaySpecError naming `source` and the field. */
export function decodeRelaySpec(text: string, source = RELAY_SPEC_ENV): RelaySpecJson {
  const hex = text.trim();
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex))
    throw new RelaySpecError(`${source}: not hex (expected the hex of the RelaySpec JSON)`);
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  let parsed: unknown;
  try {
    parsed = JSON.parse(utf8Decode(bytes));
  } catch (e) {
    throw new RelaySpecError(`${source}: hex decodes to no JSON (${(e as Error).message})`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new RelaySpecError(`${source}: the JSON is not an object`);
  const o = parsed as Record<string, unknown>;
  const bad = (field: string, want: string) =>
    new RelaySpecError(
      `${source}: field '${field}' must be ${want}, got ${JSON.stringify(o[field]) ?? 'nothing'}`,
    );
  if (typeof o.host !== 'string' || o.host === '') throw bad('host', 'a host name');
  if (typeof o.controller_host !== 'string' || o.controller_host === '')
    throw bad('controller_host', 'an address');
  // The loopback listeners sit at +4 and +5, which must still be ports.
  if (!isU32(o.controller_port) || o.controller_port < 1 || o.controller_port > 65535 - RELAY_CONTROL_OFFSET)
    throw bad('controller_port', `a port 1..${65535 - RELAY_CONTROL_OFFSET}`);
  if (!isU32(o.world_size) || o.world_size < 1) throw bad('world_size', 'a whole number at least 1');
  const world = o.world_size;
  if (!Array.isArray(o.ranks) || o.ranks.length === 0 || !o.ranks.every((r) => isU32(r) && r < world))
    throw bad('ranks', `a non-empty list of ranks < world_size ${world}`);
  const ranks = o.ranks as number[];
  if (new Set(ranks).size !== ranks.length) throw bad('ranks', 'a list without repeats');
  if (typeof o.salt_hex !== 'string') throw bad('salt_hex', '32 hex characters');
  try {
    parseSessionSalt(o.salt_hex, `${source}: field 'salt_hex'`);
  } catch (e) {
    if (e instanceof SaltError) throw new RelaySpecError(e.message);
    throw e;
  }
  if (typeof o.data_channel !== 'boolean') throw bad('data_channel', 'true or false');
  const ceiling = o.frame_ceiling_bytes ?? 0;
  if (!Number.isSafeInteger(ceiling) || (ceiling as number) < 0)
    throw bad('frame_ceiling_bytes', 'a whole number of bytes (0 = unset)');
  return {
    host: o.host,
    controller_host: o.controller_host,
    controller_port: o.controller_port,
    ranks: [...ranks],
    salt_hex: o.salt_hex,
    world_size: world,
    data_channel: o.data_channel,
    frame_ceiling_bytes: ceiling as number,
  };
}
