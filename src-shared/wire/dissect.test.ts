// The dissector: byte ranges that tile the unit, nested payloads, verdicts
// with the decoder's codes, and no throw on short or garbage input.
import { describe, expect, it } from 'vitest';
import { concatBytes, hexToBytes } from './bytes';
import { DTYPE_F32 } from './constants';
import { encodeControlFrame } from './control-frame';
import { encodeControlMsg } from './control-msgs';
import { dissect, type Field } from './dissect';
import { encodeLenFrame } from './len-frame';
import { nobleMac } from './mac';
import { encodeMuxRecord } from './mux';
import { encodeRoundFrame, tensorFromValues } from './round-frame';
import { SALT_A, VECTORS } from './test-helpers';
import { isLayer } from './units-json';

/** Top-level fields must tile [0, length) without gaps or overlaps. */
function expectTiling(fields: Field[], length: number, start = 0): void {
  let pos = start;
  for (const f of fields) {
    expect(f.offset).toBe(pos);
    pos += f.length;
    if (f.children && f.children.length) expectTiling(f.children, f.offset + f.length, f.offset);
  }
  expect(pos).toBe(length);
}

const mac = nobleMac(SALT_A);

describe('dissect', () => {
  it('every vector: verdict equals the expectation, fields tile the bytes', () => {
    for (const v of VECTORS) {
      if (!isLayer(v.unit.layer)) throw new Error(v.unit.layer);
      const bytes = hexToBytes(v.hex);
      const d = dissect(v.unit.layer, bytes, { salt: hexToBytes(v.salt) });
      expect(d.verdict, v.name).toBe(v.expect);
      if (v.expect === 'ok') expectTiling(d.fields, bytes.length);
    }
  });

  it('a HostFrame shows its RoundFrame and tensors at record offsets', () => {
    const rf = encodeRoundFrame(
      { roundKind: 0, weight: 2, tensors: [tensorFromValues(DTYPE_F32, [2], [1.5, 2.5])] },
      mac,
    );
    const rec = encodeMuxRecord({ kind: 'HostFrame', payload: rf }, mac);
    const d = dissect('mux', rec, { mac });
    expect(d).toMatchObject({ kind: 'HostFrame', verdict: 'ok', innerOffset: 25 });
    expect(d.inner).toMatchObject({ layer: 'roundframe', verdict: 'ok' });
    const payload = d.fields.find((f) => f.name === 'payload')!;
    const tensor = payload.children!.find((f) => f.name === 'tensor[0]')!;
    expect(tensor).toMatchObject({ offset: 25 + 17, length: 2 + 4 + 8 + 8, value: 'f32 [2]' });
    expectTiling(d.fields, rec.length);
  });

  it('a unit captured short still shows its nested header and tensor fields', () => {
    const values = Array.from({ length: 64 }, (_, i) => i);
    const rf = encodeRoundFrame(
      { roundKind: 0, weight: 3, tensors: [tensorFromValues(DTYPE_F32, [64], values)] },
      mac,
    );
    const rec = encodeMuxRecord({ kind: 'HostFrame', payload: rf }, mac);
    for (const [layer, unit, innerAt] of [
      ['mux', rec, 25],
      ['lenframe', encodeLenFrame(rf), 4],
    ] as const) {
      const kept = unit.subarray(0, innerAt + 17 + 2 + 4 + 8 + 20);
      const d = dissect(layer, kept, { mac });
      expect(d.verdict, layer).toBe('TRUNCATED');
      expect(d.inner, layer).toMatchObject({ layer: 'roundframe', verdict: 'TRUNCATED' });
      const outer = d.fields[d.fields.length - 1];
      const weight = outer.children!.find((f) => f.name === 'weight')!;
      expect(weight).toMatchObject({ offset: innerAt + 9, length: 8, value: '3' });
      const tensor = outer.children!.find((f) => f.name === 'tensor[0]')!;
      expect(tensor.children!.find((f) => f.name === 'data')!.value).toBe('truncated: 20 of 256 bytes');
    }
  });

  it('a Data record shows its ControlFrame and message; a len-framed blob its inner unit', () => {
    const cf = encodeControlFrame(
      {
        version: 2,
        msgKind: 1,
        payload: encodeControlMsg({ type: 'StartEpoch', epoch: 7, partitionOffset: 100, partitionSize: 256 }),
      },
      mac,
    );
    const d = dissect('mux', encodeMuxRecord({ kind: 'Data', rank: 3, payload: cf }, mac), { mac });
    expect(d.inner?.kind).toBe('ControlFrame Control');
    const [variant, plan] = d.inner!.fields.find((f) => f.name === 'payload')!.children!;
    expect(variant.value).toMatch(/^3 \(StartEpoch, ControlMsgWire table v2\)/);
    expect(plan.value).toBe('{"epoch":7,"partitionOffset":100,"partitionSize":256} [plan]');
    const l = dissect('lenframe', encodeLenFrame(cf), { mac });
    expect(l).toMatchObject({
      verdict: 'ok',
      innerOffset: 4,
      inner: { layer: 'controlframe', verdict: 'ok' },
    });
  });

  it('a tampered inner RoundFrame fails inside a mux record whose own MAC is fine', () => {
    const rf = encodeRoundFrame(
      { roundKind: 0, weight: 1, tensors: [] },
      nobleMac(new Uint8Array(16).fill(0xaa)),
    );
    const d = dissect('mux', encodeMuxRecord({ kind: 'Broadcast', payload: rf }, mac), { mac });
    expect(d.verdict).toBe('ok');
    expect(d.inner?.verdict).toBe('HMAC_MISMATCH');
  });

  it('never throws on prefixes, garbage and hostile lengths', () => {
    const samples = VECTORS.map((v) => hexToBytes(v.hex));
    samples.push(
      hexToBytes('f1170df1ffffffff00000000000000f03f'),
      hexToBytes('d0170df1010000000300000000ffffff7f'),
      new Uint8Array(0),
    );
    for (const layer of ['mux', 'roundframe', 'controlframe', 'lenframe', 'handshake'] as const) {
      for (const s of samples) {
        for (let cut = 0; cut <= s.length; cut++) {
          const d = dissect(layer, concatBytes(s.subarray(0, cut)), { mac });
          expect(typeof d.verdict).toBe('string');
        }
      }
    }
  });
});
