// 5.4 item 22 and the streamed write: prefix first, body in chunks, exact count.
import { describe, expect, it } from 'vitest';
import { bytesToHex, concatBytes } from './bytes';
import { DTYPE_F32 } from './constants';
import { LenFrameReader } from './len-frame-reader';
import { nobleMac } from './mac';
import { encodeRoundFrame, tensorFromValues } from './round-frame';
import { StreamedLenFrameWriter, writeRoundFrameStreamed } from './streamed-writer';

const mac = nobleMac(new Uint8Array(16));

describe('streamed len-framed writes', () => {
  it('22. an emitter byte count that differs from the declared length is rejected ("declared")', () => {
    const out: Uint8Array[] = [];
    const w = new StreamedLenFrameWriter(8, (b) => out.push(b));
    w.write(new Uint8Array(4));
    expect(() => w.finish()).toThrow(/declared 8 bytes, the emitter wrote 4/);
    const over = new StreamedLenFrameWriter(2, () => {});
    expect(() => over.write(new Uint8Array(3))).toThrow(/declared/);
  });

  it('a streamed RoundFrame is the prefix then the frame, byte for byte, and reads back as one unit', () => {
    const frame = { roundKind: 0, weight: 2, tensors: [tensorFromValues(DTYPE_F32, [3], [1, 2, 3])] };
    const out: Uint8Array[] = [];
    writeRoundFrameStreamed(frame, mac, (b) => out.push(b));
    expect(out.length).toBeGreaterThan(2);
    const wire = concatBytes(...out);
    const body = encodeRoundFrame(frame, mac);
    expect(bytesToHex(wire)).toBe(bytesToHex(concatBytes(new Uint8Array([body.length, 0, 0, 0]), body)));
    expect(new LenFrameReader().push(wire).map((u) => bytesToHex(LenFrameReader.blobOf(u)))).toEqual([
      bytesToHex(body),
    ]);
  });

  it('the prefix is refused over the ceiling before any body byte', () => {
    const out: Uint8Array[] = [];
    expect(() => new StreamedLenFrameWriter(11, (b) => out.push(b), 10)).toThrow(/frame ceiling/);
    expect(out.length).toBe(0);
  });
});
