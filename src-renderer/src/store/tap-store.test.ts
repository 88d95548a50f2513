// The tap dialog's fields, checked on Start with the lab's ranges: a port is
// 0..65535 there as for `relay-lab tap --listen`.
import { describe, expect, it } from 'vitest';
import { tapSpecOfForm } from './tap-store';

const SALT = '0102030405060708090a0b0c0d0e0f10';
const form = { listen: '127.0.0.1:0', upstream: '10.0.0.5:7000', saltHex: SALT, name: '' };

describe('tap dialog fields', () => {
  it('turns good fields into a spec', () => {
    expect(tapSpecOfForm(form)).toMatchObject({
      listenPort: 0,
      upstreamHost: '10.0.0.5',
      upstreamPort: 7000,
    });
  });

  it('refuses a port past 65535 in the same words as the command line', () => {
    expect(tapSpecOfForm({ ...form, listen: '99999' })).toBe('Listen port: 99999 is outside 0 to 65535');
    expect(tapSpecOfForm({ ...form, upstream: 'h:70000' })).toBe(
      'Upstream port: 70000 is outside 0 to 65535',
    );
    for (const upstream of ['h:NaN', 'h:1e9', 'h:', 'h:-1'])
      expect(typeof tapSpecOfForm({ ...form, upstream }), upstream).toBe('string');
  });
});
