// node:crypto implementation of the Mac interface: OpenSSL's HMAC-SHA256 runs
// at roughly the machine's hashing limit, which is the relay's cost floor.
import { createHmac } from 'node:crypto';
import { TAG_LEN, type Mac, type MacFactory, type MacStream } from '@shared/wire/mac';

export const nodeMac: MacFactory = (salt): Mac => {
  const key = Buffer.from(salt);
  const stream = (): MacStream => {
    const h = createHmac('sha256', key);
    return {
      update: (chunk) => void h.update(chunk),
      finish: () => new Uint8Array(h.digest().subarray(0, TAG_LEN)),
    };
  };
  return {
    salt: new Uint8Array(key),
    stream,
    tag: (...parts) => {
      const s = stream();
      for (const p of parts) s.update(p);
      return s.finish();
    },
  };
};
