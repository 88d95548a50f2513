// The CLI.md JSON unit form: parse/print round trips, values JSON numbers
// cannot carry, dtype rounding on encode, and named errors for bad fields.
import { describe, expect, it } from 'vitest';
import { hexToBytes } from './bytes';
import { WireError } from './errors';
import { nobleMac } from './mac';
import { VECTORS } from './test-helpers';
import { decodeUnit, encodeUnit, unitFromJson, unitToJson } from './units-json';

const mac = nobleMac(new Uint8Array(16));

describe('JSON unit form', () => {
  it('every ok vector parses and prints back to the same JSON', () => {
    for (const v of VECTORS.filter((x) => x.expect === 'ok'))
      expect(unitToJson(unitFromJson(v.unit)), v.name).toEqual(v.unit);
  });

  it('NaN, infinities and -0 survive as strings; f32 values are rounded with fround, bf16 with RNE', () => {
    const unit = {
      layer: 'roundframe',
      roundKind: 'Control',
      weight: 0,
      tensors: [
        { dtype: 'f32', dims: [5], data: ['NaN', 'Infinity', '-Infinity', '-0', 0.1] },
        { dtype: 'bf16', dims: [2], data: [1.00390625, 3.14159] },
      ],
    };
    const back = decodeUnit('roundframe', encodeUnit(unit, mac), mac);
    expect(back.tensors).toEqual([
      { dtype: 'f32', dims: [5], data: ['NaN', 'Infinity', '-Infinity', '-0', Math.fround(0.1)] },
      { dtype: 'bf16', dims: [2], data: [1, 3.140625] },
    ]);
  });

  it('a ControlFrame decode adds the message when the lab decodes its kind', () => {
    const v = VECTORS.find((x) => x.name === 'controlframe v2 StartEpoch')!;
    const got = decodeUnit('controlframe', hexToBytes(v.hex), nobleMac(hexToBytes(v.salt)));
    expect(got.msg).toEqual({ type: 'StartEpoch', epoch: 7, partitionOffset: 100, partitionSize: 256 });
  });

  it('bad fields are BAD_PAYLOAD errors that name the field', () => {
    const cases: [unknown, RegExp][] = [
      [null, /must be a JSON object/],
      [{ layer: 'nope' }, /'layer' must be one of/],
      [{ layer: 'mux', kind: 'Data', rank: -1, payload: '' }, /'rank'/],
      [{ layer: 'mux', kind: 'Data', rank: 1, payload: 'abc' }, /odd number/],
      [{ layer: 'mux', kind: 'Control', msg: { type: 'Hi' } }, /msg.type/],
      [
        {
          layer: 'roundframe',
          roundKind: 'Model',
          weight: 1,
          tensors: [{ dtype: 'f16', dims: [1], data: [1] }],
        },
        /dtype/,
      ],
      [
        {
          layer: 'roundframe',
          roundKind: 'Model',
          weight: 1,
          tensors: [{ dtype: 'f32', dims: [2], data: [1] }],
        },
        /do not fill shape/,
      ],
      [{ layer: 'handshake', type: 'x', version: 1 }, /handshake 'type'/],
    ];
    for (const [json, re] of cases) {
      try {
        encodeUnit(json, mac);
        expect.unreachable(JSON.stringify(json));
      } catch (e) {
        expect(e).toBeInstanceOf(WireError);
        expect((e as WireError).code).toBe('BAD_PAYLOAD');
        expect((e as Error).message).toMatch(re);
      }
    }
  });
});
