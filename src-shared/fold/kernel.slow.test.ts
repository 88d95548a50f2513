// Fold kernel throughput against the machine's own copy speed (kept out of
// `npm test`; run with `npm run test:slow -- src-shared/fold-kernel`). Folds 4
// frames of 16 MiB (f32) into one accumulator with each kernel and prints the
// ratio to Buffer.copy of the same bytes. It asserts the folded values, never
// a speed: the ratio is a measurement to read, not a pass/fail criterion.
import { describe, expect, it } from 'vitest';
import { jsFoldKernel, type FoldKernel } from './kernel';
import { createWasmFoldKernel } from './kernel-wasm';
import { FoldAccumulator } from './index';
import { tensorValues } from '../wire/tensor';

const MiB = 1024 * 1024;
const SIZE = 16 * MiB;

function bestOf(reps: number, f: () => void): number {
  let best = Infinity;
  for (let r = 0; r < reps; r++) {
    const t = performance.now();
    f();
    best = Math.min(best, performance.now() - t);
  }
  return best;
}

describe('fold kernel throughput (4 x 16 MiB)', () => {
  it('reports the ratio to Buffer.copy for each kernel', () => {
    // Payloads start one byte into their buffer, as tensor data do inside a frame.
    const frames = Array.from({ length: 4 }, (_, k) => {
      const b = Buffer.alloc(SIZE + 1);
      const v = new Float32Array(SIZE / 4).fill(k + 1);
      b.set(new Uint8Array(v.buffer), 1);
      return b.subarray(1);
    });
    const dst = Buffer.alloc(SIZE);
    const copyMs = bestOf(9, () => {
      for (const f of frames) f.copy(dst, 0, 0, SIZE);
    });
    const wasm = createWasmFoldKernel();
    const runs: [string, FoldKernel, Float32Array][] = [['js', jsFoldKernel, new Float32Array(SIZE / 4)]];
    if (wasm) {
      runs.push(['wasm-simd (plain accumulator, staged)', wasm, new Float32Array(SIZE / 4)]);
      runs.push([
        'wasm-simd (accumulator in module memory, as the fold allocates it)',
        wasm,
        wasm.allocAccumulator!(SIZE / 4),
      ]);
    }
    for (const [label, k, acc] of runs) {
      const foldMs = bestOf(k === jsFoldKernel ? 3 : 9, () => {
        acc.fill(0);
        for (const f of frames) k.addF32Into(acc, f);
      });
      expect(acc[0]).toBe(10);
      expect(acc[acc.length - 1]).toBe(10);
      console.log(
        `[fold-kernel] ${label}: fold ${foldMs.toFixed(2)} ms, Buffer.copy ${copyMs.toFixed(2)} ms, ratio ${(copyMs / foldMs).toFixed(3)}x`,
      );
    }
  });

  it('reports the ratio for the whole FoldAccumulator (4 deposits + result)', () => {
    const frames = Array.from({ length: 4 }, (_, k) => {
      const b = Buffer.alloc(SIZE + 1);
      b.set(new Uint8Array(new Float32Array(SIZE / 4).fill(k + 1).buffer), 1);
      return { roundKind: 0, weight: 1, tensors: [{ dtype: 0, dims: [SIZE / 4], data: b.subarray(1) }] };
    });
    const dst = Buffer.alloc(SIZE);
    const copyMs = bestOf(9, () => {
      for (const f of frames) Buffer.from(f.tensors[0].data.buffer, 1, SIZE).copy(dst);
    });
    const acc = new FoldAccumulator();
    let last: ArrayLike<number> = [];
    const foldMs = bestOf(9, () => {
      acc.reset();
      frames.forEach((f, rank) => acc.deposit(rank, f));
      last = tensorValues(acc.result()!.tensors[0]).subarray(0, 2);
    });
    expect(Array.from(last)).toEqual([10, 10]);
    console.log(
      `[fold-kernel] FoldAccumulator: fold ${foldMs.toFixed(2)} ms, Buffer.copy ${copyMs.toFixed(2)} ms, ratio ${(copyMs / foldMs).toFixed(3)}x`,
    );
  });
});
