// Issue 16, the codec's parts: item 6 (bytes after a RoundFrame footer or a
// bincode message are ignored, as flodl ignores them, and shown as
// information), item 7 (the 16 MiB ControlFrame cap exists only from v2),
// item 9 (the named index table; every variant of the chosen table decodes).
import { describe, expect, it } from 'vitest';
import { bytesToHex, concatBytes, hexToBytes, writeU32LE } from './bytes';
import { CONTROL_FRAME_HEADER_LEN, CONTROL_FRAME_MAGIC, DTYPE_F32, MAX_CONTROL_PAYLOAD } from './constants';
import { decodeControlFrame, encodeControlFrame } from './control-frame';
import { CONTROL_INDEX_TABLES, MSG_TABLES, type FieldType, type MsgFamily } from './control-msg-tables';
import { decodeControlMsg, decodeTimingMsg, encodeTimingMsg } from './control-msgs';
import { dissect } from './dissect';
import { nobleMac } from './mac';
import { encodeMuxRecord } from './mux';
import { decodeRoundFrame, encodeRoundFrame, tensorFromValues } from './round-frame';
import { RoundFrameStreamParser } from './round-frame-stream';
import { codeOf } from './test-helpers';
import { decodeUnitVerdict } from './units-json';
import { decodeWireMsg } from './wire-msg';

const mac = nobleMac(new Uint8Array(16));
const frame = encodeRoundFrame(
  { roundKind: 0, weight: 1, tensors: [tensorFromValues(DTYPE_F32, [2], [1, 5])] },
  mac,
);
const extra = hexToBytes('c0ffee');

describe('item 6: trailing bytes are accepted as flodl does, and shown', () => {
  it('control payload 0d 00 decodes as Shutdown; the dissector shows the extra byte', () => {
    expect(decodeControlMsg(hexToBytes('0d00'))).toEqual({ type: 'Shutdown' });
    const cf = encodeControlFrame({ version: 2, msgKind: 1, payload: hexToBytes('0d00') }, mac);
    const d = dissect('controlframe', cf, { mac });
    expect(d.verdict).toBe('ok');
    const children = d.fields.find((f) => f.name === 'payload')!.children!;
    expect(children.map((c) => c.name)).toEqual(['variant', 'trailing (ignored)']);
    expect(children[1]).toMatchObject({ offset: CONTROL_FRAME_HEADER_LEN + 1, length: 1 });
    expect(d.notes).toEqual([
      "1 bytes after the ControlMsgWire Shutdown: ignored, as flodl's decode ignores them",
    ]);
    const j = decodeUnitVerdict('controlframe', cf, mac);
    expect(j).toMatchObject({ verdict: 'ok', msg: { type: 'Shutdown' } });
    expect(j.notes).toHaveLength(1);
  });

  it('bytes after a RoundFrame footer inside a HostFrame payload: ok, inner ok, shown as ignored', () => {
    const rec = encodeMuxRecord({ kind: 'HostFrame', payload: concatBytes(frame, extra) }, mac);
    const d = dissect('mux', rec, { mac });
    expect(d.verdict).toBe('ok');
    expect(d.inner?.verdict).toBe('ok');
    expect(d.notes?.join(' ')).toMatch(/3 bytes after the RoundFrame footer: ignored/);
    const unit = decodeUnitVerdict('roundframe', concatBytes(frame, extra), mac);
    expect(unit).toMatchObject({ verdict: 'ok', trailingBytes: 3 });
    expect(decodeRoundFrame(concatBytes(frame, extra), mac, { trailing: 'ignore' }).trailing).toBe(3);
    expect(codeOf(() => decodeRoundFrame(concatBytes(frame, extra), mac))).toBe('TRAILING_BYTES');
  });

  it("the stream parser over a len-framed blob: 'ignore' completes at the blob's end, default rejects", () => {
    const blob = concatBytes(frame, extra);
    let completed = 0;
    const p = new RoundFrameStreamParser(mac, {
      totalLen: blob.length,
      trailing: 'ignore',
      sink: { onComplete: (c) => void (completed = c.wireLen) },
    });
    expect(p.push(blob.subarray(0, frame.length + 1))).toBe(frame.length + 1);
    expect(completed).toBe(0); // the blob is not complete yet: nothing is accepted
    expect(codeOf(() => p.end())).toBe('TRUNCATED');
    p.push(blob.subarray(frame.length + 1));
    expect([completed, p.trailingBytes, p.done]).toEqual([frame.length, 3, true]);
    const strict = new RoundFrameStreamParser(mac, { totalLen: blob.length });
    expect(codeOf(() => strict.push(blob))).toBe('TRAILING_BYTES');
  });

  it('bytes after a RelayControlMsg are ignored (mux.rs decode drops the count)', () => {
    const rec = encodeMuxRecord({ kind: 'Data', rank: 0, payload: hexToBytes('01ff') }, mac);
    rec[8] = 0x02;
    rec.set(mac.tag(rec.subarray(0, 17), rec.subarray(25)), 17);
    const out = decodeUnitVerdict('mux', rec, mac);
    expect(out).toMatchObject({ verdict: 'ok', msg: { type: 'HelloAck' } });
    expect(out.notes).toEqual(["1 bytes after the RelayControlMsg: ignored, as flodl's decode ignores them"]);
  });
});

describe('item 7: the 16 MiB ControlFrame payload cap applies only from v2', () => {
  const header = (version: number, len: number) => {
    const h = new Uint8Array(CONTROL_FRAME_HEADER_LEN);
    writeU32LE(h, 0, CONTROL_FRAME_MAGIC);
    writeU32LE(h, 4, version);
    writeU32LE(h, 16, 1);
    writeU32LE(h, 20, len);
    return h;
  };
  it.each([
    [1, MAX_CONTROL_PAYLOAD + 1, 'TRUNCATED'],
    [2, MAX_CONTROL_PAYLOAD + 1, 'OVER_CEILING'],
    [3, MAX_CONTROL_PAYLOAD + 1, 'OVER_CEILING'],
    [2, MAX_CONTROL_PAYLOAD, 'TRUNCATED'],
  ])('v%d with payload_len %d: %s', (version, len, code) => {
    expect(codeOf(() => decodeControlFrame(header(version, len), mac))).toBe(code);
  });

  it('the header is judged only once its 24 bytes are in (flodl: EOF inside it is a clean None)', () => {
    expect(codeOf(() => decodeControlFrame(hexToBytes('00000000'), mac))).toBe('TRUNCATED');
  });
});

/** A sample encoding of a field type (what a flodl peer would send). */
const SAMPLE: Record<FieldType, string> = {
  u8: '07',
  u16: 'fb3930',
  u32: '05',
  u64: '05',
  'uint?': '05',
  f64: '000000000000f83f',
  bytes: '02aabb',
  optF64: '01000000000000f83f',
  plan: '010203',
  optPlan: '01010203',
  opaque: 'abcd',
};

describe('item 9: every variant of every index table decodes', () => {
  for (const table of CONTROL_INDEX_TABLES) {
    for (const family of ['ControlMsgWire', 'TimingMsgWire'] as MsgFamily[]) {
      it(`${family}, table ${table}: ${MSG_TABLES[table][family].length} variants`, () => {
        MSG_TABLES[table][family].forEach((spec, index) => {
          const hex = index.toString(16).padStart(2, '0') + spec.fields.map((f) => SAMPLE[f.type]).join('');
          const m = decodeWireMsg(family, hexToBytes(hex), table);
          expect(m.name).toBe(spec.name);
          const opaqueAt = spec.fields.findIndex((f) => f.type === 'opaque');
          expect(m.fields.length).toBe(opaqueAt < 0 ? spec.fields.length : opaqueAt);
          expect(m.trailing).toBe(0);
          if (opaqueAt >= 0) expect(m.undecoded?.note).toMatch(/not given in WIRE.md 3.5/);
        });
        const n = MSG_TABLES[table][family].length;
        expect(codeOf(() => decodeWireMsg(family, Uint8Array.of(n), table))).toBe('BAD_PAYLOAD');
      });
    }
  }

  it('v2: ControlMsgWire 16 and 17 do not exist; v2-late: SaveConsensusModel and CoordHeartbeat', () => {
    expect(codeOf(() => decodeControlMsg(hexToBytes('1003')))).toBe('BAD_PAYLOAD');
    expect(decodeControlMsg(hexToBytes('1003'), { indexTable: 'v2-late' })).toMatchObject({
      type: 'Other',
      name: 'SaveConsensusModel',
      fields: { target_rank: 3 },
    });
    expect(decodeControlMsg(hexToBytes('11'), { indexTable: 'v2-late' })).toMatchObject({
      name: 'CoordHeartbeat',
    });
  });

  it('TimingMsgWire: Heartbeat is 4 in v2 and 5 in v2-late (Intent at 4), both ways', () => {
    const hb = { type: 'Heartbeat', rank: 2, stepCount: 9 } as const;
    expect(bytesToHex(encodeTimingMsg(hb))).toBe('040209');
    expect(bytesToHex(encodeTimingMsg(hb, { indexTable: 'v2-late' }))).toBe('050209');
    expect(decodeTimingMsg(hexToBytes('050209'), { indexTable: 'v2-late' })).toEqual(hb);
    expect(decodeTimingMsg(hexToBytes('050209'))).toEqual({ type: 'SnapshotReady', rank: 2 });
    expect(decodeTimingMsg(hexToBytes('0402ab'), { indexTable: 'v2-late' })).toMatchObject({
      type: 'Other',
      name: 'Intent',
      rank: 2,
    });
  });

  it('the dissector labels fields whose type WIRE.md does not give', () => {
    const cf = encodeControlFrame({ version: 2, msgKind: 2, payload: hexToBytes('0a02fb3930') }, mac);
    const d = dissect('controlframe', cf, { mac });
    const children = d.fields.find((f) => f.name === 'payload')!.children!;
    expect(children.find((c) => c.name === 'rank')!.value).toMatch(/width not given/);
    expect(children.find((c) => c.name === 'port')!.value).toBe('12345 [u16]');
  });
});
