// Channel-select magics (WIRE.md 3.1): the 4 LE bytes a cross-host dial
// writes first so the controller's single port can route the connection.
import {
  CHANNEL_MAGIC_CONTROL,
  CHANNEL_MAGIC_DATA,
  CHANNEL_MAGIC_HTTP_GET,
  CHANNEL_MAGIC_HTTP_POST,
  CHANNEL_MAGIC_JOIN,
  CHANNEL_MAGIC_RENDEZVOUS,
} from './constants';
import { readU32LE, u32Bytes } from './bytes';
import { WireError } from './errors';

export {
  CHANNEL_MAGIC_CONTROL,
  CHANNEL_MAGIC_DATA,
  CHANNEL_MAGIC_HTTP_GET,
  CHANNEL_MAGIC_HTTP_POST,
  CHANNEL_MAGIC_JOIN,
  CHANNEL_MAGIC_RENDEZVOUS,
} from './constants';

export type Channel = 'data' | 'control' | 'rendezvous' | 'join' | 'http';
export const CHANNEL_MAGIC_LEN = 4;

const MAGIC_OF: Record<Exclude<Channel, 'http'>, number> = {
  rendezvous: CHANNEL_MAGIC_RENDEZVOUS,
  data: CHANNEL_MAGIC_DATA,
  control: CHANNEL_MAGIC_CONTROL,
  join: CHANNEL_MAGIC_JOIN,
};

export function encodeChannelMagic(ch: Exclude<Channel, 'http'>): Uint8Array {
  return u32Bytes(MAGIC_OF[ch]);
}

/** The channel a peeked 4-byte magic selects, or null (the port mux drops the connection). */
export function channelOfMagic(bytes4: Uint8Array): Channel | null {
  if (bytes4.length < CHANNEL_MAGIC_LEN) return null;
  switch (readU32LE(bytes4, 0)) {
    case CHANNEL_MAGIC_RENDEZVOUS:
      return 'rendezvous';
    case CHANNEL_MAGIC_DATA:
      return 'data';
    case CHANNEL_MAGIC_CONTROL:
      return 'control';
    case CHANNEL_MAGIC_JOIN:
      return 'join';
    case CHANNEL_MAGIC_HTTP_GET:
    case CHANNEL_MAGIC_HTTP_POST:
      return 'http';
    default:
      return null;
  }
}

/** Strict form for a subsystem's first read: the magic must be exactly `expected`. */
export function expectChannelMagic(bytes4: Uint8Array, expected: Exclude<Channel, 'http'>): void {
  if (bytes4.length !== CHANNEL_MAGIC_LEN)
    throw new WireError('TRUNCATED', `channel magic needs 4 bytes, got ${bytes4.length}`);
  const got = readU32LE(bytes4, 0);
  if (got !== MAGIC_OF[expected]) {
    throw new WireError(
      'BAD_MAGIC',
      `channel magic 0x${got.toString(16).padStart(8, '0')} is not the ${expected} magic 0x${MAGIC_OF[expected].toString(16)}`,
    );
  }
}
