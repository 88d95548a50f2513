// The rank's blob memory is reused only for a blob that starts after the
// caller asked for the next one (so was done with the last): a blob that
// starts while another is queued, handed out, or given to a listener gets
// memory of its own and never overwrites bytes still being read.
import { describe, expect, it } from 'vitest';
import { BlobAssembly } from './blob-assembly';

function assemble(a: BlobAssembly, fill: number, len = 16): Uint8Array {
  a.start(len);
  a.append(new Uint8Array(len >> 1).fill(fill));
  a.append(new Uint8Array(len - (len >> 1)).fill(fill));
  return a.finish();
}

describe('BlobAssembly', () => {
  it('reuses one buffer from blob to blob when each was handed out and released', () => {
    const a = new BlobAssembly();
    const first = assemble(a, 1);
    a.handed(first);
    a.releaseHanded();
    const second = assemble(a, 2);
    expect(second.buffer).toBe(first.buffer);
    expect([...second]).toEqual(new Array(16).fill(2));
  });

  it('gives a blob its own memory while the previous one is still queued or handed', () => {
    const a = new BlobAssembly();
    const queued = assemble(a, 1);
    const next = assemble(a, 2); // arrived before anyone asked for `queued`
    expect(next.buffer).not.toBe(queued.buffer);
    a.handed(queued);
    const third = assemble(a, 3); // `queued` handed, not yet released
    expect(third.buffer).not.toBe(queued.buffer);
    expect([...queued]).toEqual(new Array(16).fill(1));
    expect([...next]).toEqual(new Array(16).fill(2));
  });

  it('never reuses memory once blobs go to a listener, and grows for a bigger blob', () => {
    const a = new BlobAssembly();
    const small = assemble(a, 1, 8);
    a.handed(small);
    a.releaseHanded();
    const big = assemble(a, 2, 64);
    expect(big.length).toBe(64);
    a.lendForever();
    a.handed(big);
    a.releaseHanded();
    const after = assemble(a, 3, 8);
    expect(after.buffer).not.toBe(big.buffer);
    expect([...big]).toEqual(new Array(64).fill(2));
  });
});
