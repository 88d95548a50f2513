// The side decoder judges a unit the same whichever path it takes: held whole
// and dissected (up to 64 KiB) or checked streamed (above). One rule
// (wire/nested.ts) says what a payload is judged as: a mux payload is opaque
// to the mux layer unless its magic names a frame; a len-framed blob must be one.
import { describe, expect, it } from 'vitest';
import { nobleMac } from '@shared/wire/mac';
import { encodeMuxHeader } from '@shared/wire/mux';
import { REC_BROADCAST, REC_DATA, REC_HOST_FRAME } from '@shared/wire/constants';
import { encodeRoundFrame } from '@shared/wire/round-frame';
import { encodeControlFrame, MSG_KIND_CONTROL } from '@shared/wire/control-frame';
import { encodeControlMsg } from '@shared/wire/control-msgs';
import { encodeLenPrefix } from '@shared/wire/len-frame';
import type { UnitLayer } from '@shared/lab/records';
import { DEFAULT_WHOLE_LIMIT, StreamDecoder, type DecodedUnit } from './stream-decoder';
import { UnitAssembly } from './unit-assembly';

const SALT = new Uint8Array(16).fill(7);
const mac = nobleMac(SALT);
const ctx = { mac, ceiling: 64 * 1024 * 1024 };
const BIG = DEFAULT_WHOLE_LIMIT + 4096;
const SMALL = 1024;

function filler(n: number): Uint8Array {
  return new Uint8Array(n).fill(0x5a);
}
function hostFrame(payload: Uint8Array, kind = REC_HOST_FRAME): Uint8Array {
  return Buffer.concat([encodeMuxHeader(kind, 0, payload, mac), payload]);
}
/** A RoundFrame of about `n` bytes (one f32 tensor). */
function roundFrame(n: number): Uint8Array {
  const elems = Math.max(1, Math.floor(n / 4));
  return encodeRoundFrame(
    { roundKind: 0, weight: 1, tensors: [{ dtype: 0, dims: [elems], data: filler(elems * 4) }] },
    mac,
  );
}

/** Both paths on the same bytes: held whole (a limit above the unit) and streamed (below it), fed in slices. */
function bothPaths(layer: UnitLayer, unit: Uint8Array) {
  return [unit.length + 1, 0].map((wholeLimit) => {
    const a = new UnitAssembly(layer, unit.length, ctx, 64 * 1024, wholeLimit);
    for (let i = 0; i < unit.length; i += 1500) a.add(unit.subarray(i, i + 1500));
    const { verdict, kind, summary } = a.finish();
    return { verdict, kind, summary };
  });
}

/** A mux stream of one unit through the side decoder, as a tap or the reproductions see it. */
function decode(unit: Uint8Array): DecodedUnit[] {
  const out: DecodedUnit[] = [];
  const d = new StreamDecoder({ mac, onUnit: (u) => out.push(u) });
  for (let i = 0; i < unit.length; i += 4096) d.push('up', unit.subarray(i, i + 4096), i);
  d.end('up', unit.length);
  return out;
}

describe('one verdict rule for whole and streamed units', () => {
  it('a HostFrame of filler (not a RoundFrame) is ok at the mux layer, over and under 64 KiB', () => {
    const big = decode(hostFrame(filler(BIG)));
    const small = decode(hostFrame(filler(SMALL)));
    expect(big.map((u) => [u.kind, u.verdict, u.code])).toEqual([['HostFrame', 'ok', undefined]]);
    expect(small.map((u) => [u.kind, u.verdict, u.code])).toEqual([['HostFrame', 'ok', undefined]]);
    expect(big[0].summary).toBe(`HostFrame ${BIG} B`);
    expect(small[0].summary).toBe(`HostFrame ${SMALL} B`);
  });

  it('both paths agree on every payload kind and corruption', () => {
    const bad = (u: Uint8Array, at: number) => {
      const c = new Uint8Array(u);
      c[at] ^= 0xff;
      return c;
    };
    const cf = encodeControlFrame(
      { version: 2, msgKind: MSG_KIND_CONTROL, payload: encodeControlMsg({ type: 'Shutdown' }) },
      mac,
    );
    const cases: [string, UnitLayer, Uint8Array][] = [];
    for (const n of [SMALL, BIG]) {
      const rf = roundFrame(n);
      cases.push(
        [`filler HostFrame ${n}`, 'mux', hostFrame(filler(n))],
        [`filler Data ${n}`, 'mux', hostFrame(filler(n), REC_DATA)],
        [`filler Broadcast ${n}`, 'mux', hostFrame(filler(n), REC_BROADCAST)],
        [`filler HostFrame, MAC broken ${n}`, 'mux', bad(hostFrame(filler(n)), 30)],
        [`RoundFrame HostFrame ${n}`, 'mux', hostFrame(rf)],
        // Re-signed at the mux layer, its RoundFrame footer broken: the nested frame decides.
        [`RoundFrame HostFrame, footer broken ${n}`, 'mux', hostFrame(bad(rf, rf.length - 1))],
        [`filler len-frame ${n}`, 'lenframe', Buffer.concat([encodeLenPrefix(n), filler(n)])],
        [`RoundFrame len-frame ${n}`, 'lenframe', Buffer.concat([encodeLenPrefix(rf.length), rf])],
      );
    }
    cases.push([`ControlFrame Data`, 'mux', hostFrame(cf, REC_DATA)]);
    for (const [name, layer, unit] of cases) {
      const [whole, streamed] = bothPaths(layer, unit);
      expect(streamed, name).toEqual(whole);
    }
    const verdictOf = (name: string) =>
      bothPaths(...(cases.find((c) => c[0] === name)!.slice(1) as [UnitLayer, Uint8Array]))[1].verdict;
    expect(verdictOf(`filler HostFrame ${BIG}`)).toBe('ok');
    expect(verdictOf(`filler HostFrame, MAC broken ${BIG}`)).toBe('HMAC_MISMATCH');
    expect(verdictOf(`RoundFrame HostFrame ${BIG}`)).toBe('ok');
    expect(verdictOf(`RoundFrame HostFrame, footer broken ${BIG}`)).toBe('HMAC_MISMATCH');
    expect(verdictOf(`filler len-frame ${BIG}`)).toBe('BAD_MAGIC');
    expect(verdictOf(`RoundFrame len-frame ${BIG}`)).toBe('ok');
  });
});
