// Issue 30 item 19 (a): a fuzz found the dissector "throwing" on 3 Timing
// frames whose message is CheckpointResult: its last field, flodl's `error`,
// has a type WIRE.md 3.5 does not give, so the dissector shows it as bytes in
// a field named `error` ("not decoded: error's type not given in WIRE.md
// 3.5..."). That was also the name of the field the dissector puts in the tree
// when its own walk throws, so the message read as a dissector crash. The
// walk's failure now has its own field name and `failure`; every unit with an
// undecoded field gets a verdict and the note.
import { describe, expect, it } from 'vitest';
import { DISSECTOR_FAILURE_FIELD, dissect, type Field } from './dissect';
import { hexToBytes } from './bytes';
import { nobleMac } from './mac';
import { opaqueUnits } from './opaque-units';
import { decodeUnitVerdict } from './units-json';
import { describeField } from '../explain/field-explanations';
import { encodeRoundFrame, tensorFromValues } from './round-frame';
import { DTYPE_F32, ROUND_KIND_MODEL } from './constants';

const mac = nobleMac(hexToBytes('0102030405060708090a0b0c0d0e0f10'));
const all = (fs: Field[]): Field[] => fs.flatMap((f) => [f, ...all(f.children ?? [])]);

describe('dissector: messages with a field of unstated type', () => {
  const units = opaqueUnits(mac);

  it('covers every variant with such a field, in both tables', () => {
    const variants = new Set(units.map((u) => `${u.table} ${u.field}`));
    // v2: EpochAggregated, EvalResult, CheckpointResult, NewNcclIdGenerated, 3 Dashboard*; v2-late adds Intent.
    expect(variants.size).toBe(7 + 8);
  });

  for (const u of units)
    it(`${u.name}: ok, with the note, no dissector failure`, () => {
      const d = dissect(u.layer, u.bytes, { mac, indexTable: u.table });
      expect(d.verdict).toBe('ok');
      expect(d.failure).toBeUndefined();
      expect(
        d.notes?.some((n) => n.startsWith(`${u.field}: `) && n.includes('not given in WIRE.md 3.5')),
      ).toBe(true);
      const tree = all(d.fields);
      expect(tree.filter((f) => f.name === DISSECTOR_FAILURE_FIELD || f.key === 'lab.error')).toEqual([]);
      const opaque = tree.find((f) => f.value.startsWith('not decoded: '))!;
      expect(opaque.key).toBe(`ctl.${u.field.split('.')[1]}`);
      expect(describeField(opaque.key)).not.toBe('');
      const v = decodeUnitVerdict(u.layer, u.bytes, mac, { indexTable: u.table });
      expect(v.verdict).toBe('ok');
    });

  it("the dissector's own failure is told apart from flodl's `error` field", () => {
    expect(DISSECTOR_FAILURE_FIELD).not.toBe('error');
    // A fractional ceiling makes the walk's BigInt conversion throw: the one way to reach the fallback.
    const frame = encodeRoundFrame(
      { roundKind: ROUND_KIND_MODEL, weight: 1, tensors: [tensorFromValues(DTYPE_F32, [1], [1])] },
      mac,
    );
    const d = dissect('roundframe', frame, { mac, ceiling: 1.5 });
    expect(d.failure).toMatch(/RangeError/);
    expect(d.fields).toEqual([expect.objectContaining({ name: DISSECTOR_FAILURE_FIELD, key: 'lab.error' })]);
  });
});
