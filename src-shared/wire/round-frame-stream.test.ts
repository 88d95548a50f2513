// The streaming RoundFrame parse: per-chunk MAC and data delivery, footer
// verified at the end, the len-prefix bound of the rank's reader (5.5 item 14).
import { describe, expect, it } from 'vitest';
import { bytesToHex, concatBytes } from './bytes';
import { DTYPE_BF16, DTYPE_F32 } from './constants';
import { nobleMac } from './mac';
import { encodeRoundFrame, tensorFromValues, elidedTensor, type RoundFrame } from './round-frame';
import { RoundFrameStreamParser, type RoundFrameSink } from './round-frame-stream';
import { TEST_SALT, codeOf } from './test-helpers';

const mac = nobleMac(TEST_SALT);
const frame: RoundFrame = {
  roundKind: 0,
  weight: 2,
  tensors: [
    tensorFromValues(
      DTYPE_F32,
      [3, 50],
      Array.from({ length: 150 }, (_, i) => i * 0.5),
    ),
    elidedTensor(DTYPE_BF16, [8]),
    tensorFromValues(DTYPE_BF16, [7], [1, 2, 3, 4, 5, 6, 7]),
  ],
};
const bytes = encodeRoundFrame(frame, mac);

function recorder() {
  const log: string[] = [];
  const data = new Map<number, Uint8Array[]>();
  const sink: RoundFrameSink = {
    onHeader: (h) => log.push(`header ${h.roundKind} ${h.weight} ${h.numTensors}`),
    onTensor: (t) => log.push(`tensor ${t.index} ${t.dtype} [${t.dims}] ${t.nbytes}`),
    onData: (i, off, b) => {
      const parts = data.get(i) ?? [];
      expect(off).toBe(parts.reduce((n, p) => n + p.length, 0));
      parts.push(b.slice());
      data.set(i, parts);
    },
    onComplete: (c) => log.push(`complete ${bytesToHex(c.tag)} ${c.wireLen}`),
  };
  return { log, data, sink };
}

describe('RoundFrameStreamParser', () => {
  it('delivers the same events for any chunking, data per chunk, completion after the MAC', () => {
    const whole = recorder();
    new RoundFrameStreamParser(mac, { sink: whole.sink }).push(bytes);
    expect(whole.log).toEqual([
      'header 0 2 3',
      'tensor 0 0 [3,50] 600',
      'tensor 1 1 [8] 0',
      'tensor 2 1 [7] 14',
      `complete ${bytesToHex(bytes.subarray(bytes.length - 8))} ${bytes.length}`,
    ]);
    for (const step of [1, 7, 64, 333]) {
      const r = recorder();
      const p = new RoundFrameStreamParser(mac, { sink: r.sink, totalLen: bytes.length });
      for (let pos = 0; pos < bytes.length; pos += step) p.push(bytes.subarray(pos, pos + step));
      p.end();
      expect(r.log).toEqual(whole.log);
      expect(bytesToHex(concatBytes(...r.data.get(0)!))).toBe(bytesToHex(frame.tensors[0].data!));
      expect(bytesToHex(concatBytes(...r.data.get(2)!))).toBe(bytesToHex(frame.tensors[2].data!));
      if (step < 600) expect(r.data.get(0)!.length).toBeGreaterThan(1);
    }
  });

  it('a tampered data byte fails at the footer and never completes', () => {
    const bad = bytes.slice();
    bad[40] ^= 1;
    const r = recorder();
    expect(codeOf(() => new RoundFrameStreamParser(mac, { sink: r.sink }).push(bad))).toBe('HMAC_MISMATCH');
    expect(r.log.some((l) => l.startsWith('complete'))).toBe(false);
  });

  it('stops at the end of its frame and leaves the next bytes alone', () => {
    const p = new RoundFrameStreamParser(mac);
    expect(p.push(concatBytes(bytes, bytes.subarray(0, 5)))).toBe(bytes.length);
    expect(p.done).toBe(true);
  });

  it('a prefix 10 bytes too long: "fewer than its length prefix"', () => {
    const p = new RoundFrameStreamParser(mac, { totalLen: bytes.length + 10 });
    expect(() => p.push(concatBytes(bytes, new Uint8Array(10)))).toThrow(/fewer than its length prefix/);
  });

  it('a prefix 10 bytes too short: a mid-frame error inside the len-framed body', () => {
    const p = new RoundFrameStreamParser(mac, { totalLen: bytes.length - 10 });
    const code = codeOf(() => {
      p.push(bytes);
      p.end();
    });
    expect(code).toBe('TRUNCATED');
    const q = new RoundFrameStreamParser(mac, { totalLen: bytes.length - 10 });
    q.push(bytes.subarray(0, 20));
    expect(() => q.end()).toThrow(/stream ended inside a len-framed RoundFrame body/);
  });
});
