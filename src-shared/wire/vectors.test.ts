// Every reference vector (fixtures/wire-vectors.json) both ways: decoding the
// hex gives the unit, encoding the unit gives the hex, rejections give the code.
import { describe, expect, it } from 'vitest';
import { bytesToHex, hexToBytes } from './bytes';
import { isWireError } from './errors';
import { nobleMac } from './mac';
import { VECTORS } from './test-helpers';
import { decodeUnit, encodeUnit, isLayer } from './units-json';

const ok = VECTORS.filter((v) => v.expect === 'ok');
const rejected = VECTORS.filter((v) => v.expect !== 'ok');

describe('reference vectors', () => {
  it('are all present', () => {
    expect(VECTORS.length).toBe(31);
    expect(rejected.length).toBe(7);
  });

  it.each(ok.map((v) => [v.name, v] as const))('decode %s', (_name, v) => {
    if (!isLayer(v.unit.layer)) throw new Error(`bad layer ${v.unit.layer}`);
    const got = decodeUnit(v.unit.layer, hexToBytes(v.hex), nobleMac(hexToBytes(v.salt)));
    expect(got).toMatchObject(v.unit);
  });

  it.each(ok.map((v) => [v.name, v] as const))('encode %s', (_name, v) => {
    expect(bytesToHex(encodeUnit(v.unit, nobleMac(hexToBytes(v.salt))))).toBe(v.hex);
  });

  it.each(rejected.map((v) => [v.name, v] as const))('reject %s', (_name, v) => {
    if (!isLayer(v.unit.layer)) throw new Error(`bad layer ${v.unit.layer}`);
    let err: unknown;
    try {
      decodeUnit(v.unit.layer, hexToBytes(v.hex), nobleMac(hexToBytes(v.salt)));
    } catch (e) {
      err = e;
    }
    expect(isWireError(err)).toBe(true);
    expect((err as { code: string }).code).toBe(v.expect);
  });
});
