// WIRE.md 5.3 (wire_tests.rs) items on ControlFrame and the payload codecs.
import { describe, expect, it } from 'vitest';
import { bytesToHex, hexToBytes, writeU32LE } from './bytes';
import { MAX_CONTROL_PAYLOAD } from './constants';
import {
  controlFrameTag,
  decodeControlFrame,
  encodeControlFrame,
  MSG_KIND_CONTROL,
  MSG_KIND_TIMING,
} from './control-frame';
import {
  decodeControlMsg,
  decodeTimingMsg,
  encodeControlMsg,
  encodeTimingMsg,
  type ControlMsg,
  type TimingMsg,
} from './control-msgs';
import { nobleMac } from './mac';
import { SAMPLE_SALT, SALT_A, codeOf } from './test-helpers';

const mac = nobleMac(SAMPLE_SALT);

const startEpoch: ControlMsg = { type: 'StartEpoch', epoch: 7, partitionOffset: 100, partitionSize: 256 };

describe('ControlFrame (5.3)', () => {
  it('3. msg kinds 1..5 round-trip', () => {
    for (let k = 1; k <= 5; k++) {
      const b = encodeControlFrame({ version: 2, msgKind: k, payload: hexToBytes('00') }, mac);
      expect(decodeControlFrame(b, mac).msgKind).toBe(k);
    }
  });

  it('4. an unknown kind is rejected and mentions MsgKind', () => {
    const b = encodeControlFrame({ version: 2, msgKind: 1, payload: hexToBytes('00') }, mac);
    writeU32LE(b, 16, 0xdead);
    expect(() => decodeControlFrame(b, mac)).toThrow(/MsgKind/);
    expect(codeOf(() => decodeControlFrame(b, mac))).toBe('UNKNOWN_KIND');
  });

  it('5. StartEpoch{7,100,256} round-trips with its tag', () => {
    const payload = encodeControlMsg(startEpoch);
    expect(bytesToHex(payload)).toBe('030764fb0001');
    const b = encodeControlFrame({ version: 2, msgKind: MSG_KIND_CONTROL, payload }, mac);
    const d = decodeControlFrame(b, mac, { version: 2 });
    expect(bytesToHex(d.tag)).toBe('d03e1c286dae1853');
    expect(decodeControlMsg(d.payload)).toEqual(startEpoch);
  });

  it('6. ShutdownWithSave{reason 1}', () => {
    const b = encodeControlFrame(
      { version: 2, msgKind: 1, payload: encodeControlMsg({ type: 'ShutdownWithSave', reason: 1 }) },
      mac,
    );
    expect(decodeControlMsg(decodeControlFrame(b, mac).payload)).toEqual({
      type: 'ShutdownWithSave',
      reason: 1,
    });
  });

  it('7. a wrong salt is HMAC_MISMATCH', () => {
    const b = encodeControlFrame({ version: 2, msgKind: 1, payload: hexToBytes('00') }, mac);
    expect(codeOf(() => decodeControlFrame(b, nobleMac(SALT_A)))).toBe('HMAC_MISMATCH');
  });

  it('8-9. a wrong magic and a wrong version', () => {
    const b = encodeControlFrame({ version: 2, msgKind: 1, payload: hexToBytes('00') }, mac);
    const m = b.slice();
    writeU32LE(m, 0, 0xdeadbeef);
    expect(codeOf(() => decodeControlFrame(m, mac))).toBe('BAD_MAGIC');
    const v = b.slice();
    writeU32LE(v, 4, 99);
    expect(codeOf(() => decodeControlFrame(v, mac, { version: 2 }))).toBe('BAD_VERSION');
  });

  it('10. an incomplete header is TRUNCATED (the reader turns it into a clean EOF)', () => {
    const b = encodeControlFrame({ version: 2, msgKind: 1, payload: hexToBytes('00') }, mac);
    expect(codeOf(() => decodeControlFrame(b.subarray(0, 0), mac))).toBe('TRUNCATED');
    expect(codeOf(() => decodeControlFrame(b.subarray(0, 23), mac))).toBe('TRUNCATED');
  });

  it('23. an empty-payload frame is exactly 24 bytes; an oversized payload errors on write', () => {
    expect(encodeControlFrame({ version: 2, msgKind: 1, payload: new Uint8Array(0) }, mac).length).toBe(24);
    expect(
      codeOf(() =>
        encodeControlFrame({ version: 2, msgKind: 1, payload: new Uint8Array(MAX_CONTROL_PAYLOAD + 1) }, mac),
      ),
    ).toBe('OVER_CEILING');
  });

  it('the length cap is checked before the payload is read (and before the MAC)', () => {
    const b = encodeControlFrame({ version: 2, msgKind: 1, payload: new Uint8Array(0) }, mac);
    writeU32LE(b, 20, MAX_CONTROL_PAYLOAD + 1);
    expect(codeOf(() => decodeControlFrame(b, mac))).toBe('OVER_CEILING');
  });

  it('v1 MACs the payload only; v2+ MACs kind || len || payload (bug 6.8)', () => {
    expect(bytesToHex(controlFrameTag(1, 1, hexToBytes('00'), mac))).toBe('d627cbe61667e2ee');
    expect(bytesToHex(controlFrameTag(1, 1, hexToBytes('030764fb0001'), mac))).toBe('bafb0584bd241b19');
    // A captured v1 frame replayed as another kind still verifies; a v2 frame does not.
    const v1 = encodeControlFrame({ version: 1, msgKind: MSG_KIND_CONTROL, payload: hexToBytes('0d') }, mac);
    writeU32LE(v1, 16, MSG_KIND_TIMING);
    expect(decodeControlFrame(v1, mac).msgKind).toBe(MSG_KIND_TIMING);
    const v2 = encodeControlFrame({ version: 2, msgKind: MSG_KIND_CONTROL, payload: hexToBytes('0d') }, mac);
    writeU32LE(v2, 16, MSG_KIND_TIMING);
    expect(codeOf(() => decodeControlFrame(v2, mac))).toBe('HMAC_MISMATCH');
  });

  it('the tag does not depend on the version field (v2 vs v3)', () => {
    const a = encodeControlFrame({ version: 2, msgKind: 1, payload: hexToBytes('00') }, mac);
    const b = encodeControlFrame({ version: 3, msgKind: 1, payload: hexToBytes('00') }, mac);
    expect(bytesToHex(a.subarray(8, 16))).toBe(bytesToHex(b.subarray(8, 16)));
  });
});

describe('ControlMsgWire and TimingMsgWire (v2 indices)', () => {
  const controls: ControlMsg[] = [
    { type: 'RequestParams' },
    { type: 'Update', version: 3, nextPlan: null },
    { type: 'Update', version: 4, nextPlan: { epoch: 1, partitionOffset: 2, partitionSize: 3 } },
    { type: 'SyncNow' },
    startEpoch,
    { type: 'ExtendPartition', partitionOffset: 5, partitionSize: 6 },
    { type: 'DeclareDead', rank: 3 },
    { type: 'Throttle' },
    { type: 'SetGlobalStep', globalStep: 70000 },
    { type: 'Shutdown' },
    { type: 'ShutdownWithSave', reason: 1 },
  ];
  it.each(controls.map((m) => [m.type, m] as const))('%s round-trips', (_t, m) => {
    expect(decodeControlMsg(encodeControlMsg(m))).toEqual(m);
  });

  it('pins v2 indices', () => {
    expect(bytesToHex(encodeControlMsg({ type: 'RequestParams' }))).toBe('00');
    expect(bytesToHex(encodeControlMsg({ type: 'Throttle' }))).toBe('08');
    expect(bytesToHex(encodeControlMsg({ type: 'Shutdown' }))).toBe('0d');
    expect(bytesToHex(encodeControlMsg({ type: 'ShutdownWithSave', reason: 2 }))).toBe('0e02');
    expect(bytesToHex(encodeTimingMsg({ type: 'Heartbeat', rank: 1, stepCount: 300 }))).toBe('0401fb2c01');
  });

  const timings: TimingMsg[] = [
    {
      type: 'Batch',
      rank: 2,
      batchMs: 12.5,
      dataMs: 1.25,
      stepCount: 9,
      paramNorm: null,
      batchLoss: 0.75,
      syncDivergence: 0.01,
    },
    {
      type: 'Batch',
      rank: 0,
      batchMs: 0,
      dataMs: 0,
      stepCount: 0,
      paramNorm: 3.5,
      batchLoss: NaN,
      syncDivergence: null,
    },
    { type: 'SyncAck', rank: 1, stepCount: 100, divergence: null, postNorm: 2, preNorm: null },
    { type: 'Exiting', rank: 7 },
    { type: 'LrUpdate', rank: 1, lr: 0.001 },
    { type: 'Heartbeat', rank: 3, stepCount: 42 },
    { type: 'SnapshotReady', rank: 0 },
  ];
  it.each(timings.map((m, i) => [`${m.type} #${i}`, m] as const))('11. %s round-trips', (_t, m) => {
    expect(decodeTimingMsg(encodeTimingMsg(m))).toEqual(m);
  });

  it('rejects unknown variants and truncation; ignores trailing bytes as flodl does (issue 16 item 6)', () => {
    expect(codeOf(() => decodeControlMsg(hexToBytes('10')))).toBe('BAD_PAYLOAD');
    expect(codeOf(() => decodeControlMsg(hexToBytes('0307')))).toBe('BAD_PAYLOAD');
    expect(decodeControlMsg(hexToBytes('0000'))).toEqual({ type: 'RequestParams' });
    expect(decodeControlMsg(hexToBytes('0d00'))).toEqual({ type: 'Shutdown' });
    expect(codeOf(() => decodeTimingMsg(hexToBytes('0e00')))).toBe('BAD_PAYLOAD');
  });
});
