import { describe, expect, it } from 'vitest';
import { nobleMac, tagsEqual } from './mac';

const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
const unhex = (s: string) => Uint8Array.from(s.match(/../g) ?? [], (h) => parseInt(h, 16));
const text = (s: string) => new TextEncoder().encode(s);

// WIRE.md 5.8: hmac_sha256_64 known answers.
describe('hmac_sha256_64 (noble)', () => {
  const ZERO = new Uint8Array(16);
  const SAMPLE = unhex('112233445566778899aabbccddeeff00');
  it.each([
    [ZERO, 'hello', '4352b26e33fe0d76'],
    [SAMPLE, 'hello', 'f30bcf7e92f7d2ea'],
    [ZERO, 'hellp', 'ca3792f6406f8796'],
    [SAMPLE, 'some payload bytes for verification', '99b61ff395172d53'],
  ])('key %# over %s', (key, msg, tag) => {
    expect(hex(nobleMac(key).tag(text(msg)))).toBe(tag);
  });

  it('split updates equal one update', () => {
    const mac = nobleMac(SAMPLE);
    const whole = mac.tag(text('some payload bytes for verification'));
    const split = mac.tag(text('some payload '), text('bytes for '), text('verification'));
    expect(tagsEqual(whole, split)).toBe(true);
  });
});
