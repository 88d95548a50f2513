// flodl 0.7's own error wording for the rejections of relay/mux.rs, with
// flodl's value formatting (Rust `{:08x}`, `{:016x}`, `{:02x}`, decimal
// usize). One function per `TensorError::new(...)` site of mux.rs, named after
// it, so docs/flodl-mapping.md can point at each. The text is what a flodl
// process logs; the lab puts it on WireError.flodlMessage next to its code.
import { COMMITTED_READ_STARVATION_MS, MUX_RECORD_MAGIC, MUX_PROTOCOL_VERSION, U32_MAX } from './constants';

const hex = (v: number | bigint, width: number) => `0x${v.toString(16).padStart(width, '0')}`;

/** flodl's u64 view of a tag: the 8 tag bytes read little-endian. */
export function tagAsU64(tag: Uint8Array): bigint {
  let v = 0n;
  for (let i = Math.min(tag.length, 8) - 1; i >= 0; i--) v = (v << 8n) | BigInt(tag[i]);
  return v;
}

export const flodlMux = {
  /** finish_read, magic check. */
  badMagic: (magic: number) => `relay_mux: record magic ${hex(magic, 8)} != ${hex(MUX_RECORD_MAGIC, 8)}`,
  /** finish_read, version check. */
  badVersion: (version: number) => `relay_mux: record version ${version} != ${MUX_PROTOCOL_VERSION}`,
  /** finish_read, ceiling check (before the payload is read). */
  overCeiling: (payloadLen: number, ceiling: number, kind: number, rank: number) =>
    `relay_mux: record payload_len ${payloadLen} exceeds the frame ceiling ${ceiling} (kind=${hex(kind, 2)}, rank=${rank}); corrupt or hostile peer, or a model that has outgrown the frame ceiling`,
  /** finish_read, MAC check: both tags as flodl's u64 (first 8 bytes, little-endian), 0x%016x. */
  hmac: (computed: Uint8Array, carried: Uint8Array, kind: number, rank: number, len: number) =>
    `relay_mux: HMAC verification failed (computed ${hex(tagAsU64(computed), 16)}, wire carried ${hex(tagAsU64(carried), 16)}); session salt disagreement, tampered record, or corruption (kind=${hex(kind, 2)}, rank=${rank}, len=${len})`,
  /** finish_read, kind dispatch. */
  unknownKind: (kind: number) => `relay_mux: unknown record kind ${hex(kind, 2)}`,
  /** decode(): the bincode error is bincode 2's Display, which is its Debug form. */
  bincode: (bincodeError: string) => `relay_mux: bincode decode failed: ${bincodeError}`,
  /** write_to: payload longer than u32::MAX. */
  payloadTooLarge: (len: number) => `relay_mux: payload too large: ${len} bytes (max ${U32_MAX})`,
  /** fill_committed: clean close after the first byte of a unit. */
  peerClosedMidFrame: () => 'relay_mux: peer closed mid-frame (committed read hit EOF)',
  /** fill_committed: no byte for COMMITTED_READ_STARVATION_SECS; filled/len of the current committed buffer. */
  starved: (filled: number, len: number) =>
    `relay_mux: committed read starved mid-frame for ${COMMITTED_READ_STARVATION_MS / 1000}s (${filled}/${len} bytes); peer presumed gone`,
  /** read_len_prefix / try_read_len_framed: prefix over the ceiling. */
  lenOverCeiling: (len: number, ceiling: number) =>
    `relay_mux: len-framed blob length ${len} exceeds the frame ceiling ${ceiling}; corrupt or hostile peer`,
  /** write_len_prefix: the ceiling, checked before the u32 width. */
  lenPrefixOverCeiling: (len: number, ceiling: number) =>
    `relay_mux: len-framed blob length ${len} exceeds the frame ceiling ${ceiling}; model has outgrown the frame ceiling (see wire::frame_ceiling)`,
  /** write_len_framed / write_len_prefix: wider than the u32 prefix. */
  lenTooLarge: (len: number) => `relay_mux: len-framed blob too large: ${len} bytes (max ${U32_MAX})`,
} as const;
