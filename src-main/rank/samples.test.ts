import { describe, expect, it } from 'vitest';
import { decodeSamples, encodeSamples } from './samples';

describe('sampled elements in an adoption report', () => {
  it('keep every f32 value, NaN and the infinities included', () => {
    const values = new Float32Array([0, -0, 1.5, -3.25e-38, 3.4028234663852886e38, NaN, Infinity, -Infinity]);
    const back = decodeSamples(encodeSamples(values));
    expect(back).toHaveLength(values.length);
    back.forEach((v, i) => expect(Object.is(v, values[i])).toBe(true));
  });

  it('encode a view at its offset, not its whole buffer', () => {
    const whole = new Float32Array([9, 1, 2, 9]);
    expect(decodeSamples(encodeSamples(whole.subarray(1, 3)))).toEqual([1, 2]);
  });

  it('give no values for an adoption of weight 0 (nothing sampled)', () => {
    expect(decodeSamples(encodeSamples(new Float32Array(0)))).toEqual([]);
  });

  it('read a truncated string as the whole values it holds', () => {
    const s = encodeSamples(new Float32Array([1, 2, 3]));
    const cut = Buffer.from(s, 'base64').subarray(0, 10).toString('base64');
    expect(decodeSamples(cut)).toEqual([1, 2]);
  });
});
