// Constants of flodl 0.7's relay transport (WIRE.md 3.8). Magics are the u32
// values; on the wire they are little-endian.

export const MUX_RECORD_MAGIC = 0xf10d17d0;
export const MUX_PROTOCOL_VERSION = 1;
export const MUX_HEADER_LEN = 25;
/** Bytes 0..17 of a mux header: the part the MAC covers before the payload. */
export const MUX_MAC_PREFIX_LEN = 17;

export const REC_DATA = 0x01;
export const REC_CONTROL = 0x02;
export const REC_HOST_FRAME = 0x03;
export const REC_BROADCAST = 0x04;

export const HANDSHAKE_MAGIC_RANK = 0xf10d17c0;
export const HANDSHAKE_MAGIC_CONTROLLER_ACK = 0xf10d17c1;
export const CONTROL_HANDSHAKE_MAGIC_RANK = 0xf10d17c2;
export const CONTROL_HANDSHAKE_MAGIC_ACK = 0xf10d17c3;
export const DATA_HANDSHAKE_LEN = 16;
export const DATA_ACK_LEN = 8;
export const CONTROL_HANDSHAKE_LEN = 24;
export const CONTROL_ACK_LEN = 16;

export const ROUND_FRAME_MAGIC = 0xf10d17f1;
export const ROUND_FRAME_HEADER_LEN = 17;
export const ROUND_FRAME_FOOTER_LEN = 8;

export const CONTROL_FRAME_MAGIC = 0xf10d17c4;
export const CONTROL_FRAME_HEADER_LEN = 24;

export const CHANNEL_MAGIC_RENDEZVOUS = 0xf10d17e0;
export const CHANNEL_MAGIC_DATA = 0xf10d17e1;
export const CHANNEL_MAGIC_CONTROL = 0xf10d17e2;
export const CHANNEL_MAGIC_JOIN = 0xf10d17e3;
/** ASCII "GET " and "POST" read as u32 LE: the port mux routes them to HTTP. */
export const CHANNEL_MAGIC_HTTP_GET = 0x20544547;
export const CHANNEL_MAGIC_HTTP_POST = 0x54534f50;

export const LEN_PREFIX_LEN = 4;

export const DTYPE_F32 = 0;
export const DTYPE_BF16 = 1;
export const ROUND_KIND_MODEL = 0;
export const ROUND_KIND_CONTROL = 1;

export const MAX_ROUND_FRAME_TENSORS = 65_536;
export const MAX_CONTROL_PAYLOAD = 16 * 1024 * 1024;
/** Allocation step of incremental reads (never one allocation sized by a length field). */
export const READ_CHUNK = 64 * 1024 * 1024;
export const DEFAULT_FRAME_CEILING = 1024 * 1024 * 1024;
export const FRAME_CEILING_FLOOR = 64 * 1024 * 1024;
export const SESSION_SALT_BYTES = 16;
export const COMMITTED_READ_STARVATION_MS = 60_000;
export const POLL_TIMEOUT_MS = 100;
export const REDUCE_POLL_MS = 100;
export const OUTBOUND_QUEUE_BOUND = 64;
export const DATA_LOOPBACK_OFFSET = 4;
export const CONTROL_LOOPBACK_OFFSET = 5;
export const DEFAULT_CONTROLLER_PORT = 1337;

/** Lab defaults (WIRE.md 7.1): control protocol v2, data protocol v3. */
export const DEFAULT_CONTROL_VERSION = 2;
export const DEFAULT_DATA_VERSION = 3;

/** Largest value a u32 length field can carry. */
export const U32_MAX = 0xffff_ffff;

/**
 * derive_frame_ceiling: max(saturating 2 x model bytes, 64 MiB). JS numbers
 * saturate at MAX_SAFE_INTEGER instead of usize::MAX.
 */
export function deriveFrameCeiling(modelBytes: number): number {
  if (!Number.isFinite(modelBytes) || modelBytes <= 0) return FRAME_CEILING_FLOOR;
  const doubled = Math.min(modelBytes * 2, Number.MAX_SAFE_INTEGER);
  return Math.max(doubled, FRAME_CEILING_FLOOR);
}
