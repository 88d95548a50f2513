// node:crypto and @noble/hashes must give identical hmac_sha256_64 tags: on
// random messages of every length 0..4096, and on the same messages split
// into random update chunks.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { nobleMac } from '@shared/wire/mac';
import { nodeMac } from './node-mac';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

describe('node-mac vs noble', () => {
  it('known answers (WIRE.md 5.8)', () => {
    const zero = new Uint8Array(16);
    const sample = Buffer.from('112233445566778899aabbccddeeff00', 'hex');
    expect(hex(nodeMac(zero).tag(Buffer.from('hello')))).toBe('4352b26e33fe0d76');
    expect(hex(nodeMac(sample).tag(Buffer.from('hello')))).toBe('f30bcf7e92f7d2ea');
    expect(hex(nodeMac(sample).tag(Buffer.from('some payload bytes for verification')))).toBe(
      '99b61ff395172d53',
    );
  });

  it('agree on random messages of every length 0..4096', () => {
    const salt = randomBytes(16);
    const a = nodeMac(salt);
    const b = nobleMac(salt);
    const data = randomBytes(4096);
    for (let len = 0; len <= 4096; len++) {
      const msg = data.subarray(0, len);
      const ta = a.tag(msg);
      const tb = b.tag(msg);
      if (hex(ta) !== hex(tb)) expect.fail(`length ${len}: node ${hex(ta)} != noble ${hex(tb)}`);
      expect(ta.length).toBe(8);
    }
  });

  it('agree on split updates (streams and multi-part tags)', () => {
    const salt = randomBytes(16);
    const a = nodeMac(salt);
    const b = nobleMac(salt);
    for (let trial = 0; trial < 300; trial++) {
      const msg = randomBytes(Math.floor(Math.random() * 4097));
      const cuts = Array.from({ length: 1 + Math.floor(Math.random() * 6) }, () =>
        Math.floor(Math.random() * (msg.length + 1)),
      ).sort((x, y) => x - y);
      const parts: Uint8Array[] = [];
      let prev = 0;
      for (const c of [...cuts, msg.length]) {
        parts.push(msg.subarray(prev, c));
        prev = c;
      }
      const sa = a.stream();
      const sb = b.stream();
      for (const p of parts) {
        sa.update(p);
        sb.update(p);
      }
      const whole = hex(b.tag(msg));
      expect(hex(sa.finish())).toBe(whole);
      expect(hex(sb.finish())).toBe(whole);
      expect(hex(a.tag(...parts))).toBe(whole);
    }
  });
});
