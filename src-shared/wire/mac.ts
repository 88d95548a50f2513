// hmac_sha256_64 (WIRE.md 2.1): HMAC-SHA256 keyed by the 16-byte session salt,
// truncated to the first 8 digest bytes, which are exactly the wire bytes of
// every tag slot. Behind an interface so src-main can plug in node:crypto
// (about 9x faster than the pure-JS implementation used here).
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';

export const TAG_LEN = 8;

/** Incremental MAC over a message delivered in chunks (RoundFrame footers). */
export interface MacStream {
  update(chunk: Uint8Array): void;
  /** The 8 tag bytes (digest[0..8]). The stream is unusable afterwards. */
  finish(): Uint8Array;
}

export interface Mac {
  readonly salt: Uint8Array;
  /** Tag over the concatenation of `parts` (hmac_sha256_64_2 is two parts). */
  tag(...parts: Uint8Array[]): Uint8Array;
  stream(): MacStream;
}

export type MacFactory = (salt: Uint8Array) => Mac;

export const nobleMac: MacFactory = (salt) => {
  const key = Uint8Array.from(salt);
  const stream = (): MacStream => {
    const h = hmac.create(sha256, key);
    return {
      update: (chunk) => void h.update(chunk),
      finish: () => h.digest().subarray(0, TAG_LEN),
    };
  };
  return {
    salt: key,
    stream,
    tag: (...parts) => {
      const s = stream();
      for (const p of parts) s.update(p);
      return s.finish();
    },
  };
};

/** Tag comparison: the u64 equality of WIRE.md 2.1, byte by byte. */
export function tagsEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== TAG_LEN || b.length !== TAG_LEN) return false;
  let diff = 0;
  for (let i = 0; i < TAG_LEN; i++) diff |= a[i] ^ b[i];
  return diff === 0;
}
