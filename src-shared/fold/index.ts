// The fold (WIRE.md 4.4, 4.5): the relay's accumulator with atomic, staged
// deposits (accumulator.ts, staging.ts), FoldRounds for recycled memory
// (rounds.ts), the controller's reduce_realized_work (reduce.ts), the f32 and
// bf16 kernels (kernel.ts, kernel-wasm.ts, encode.ts) and the one tolerance
// rule (tolerance.ts). The kernel is chosen once at start-up by the process
// entry point (chooseFoldKernel); until then the portable JS kernel runs.
import {
  getFoldKernel,
  jsFoldKernel,
  receiveArena,
  releaseAccumulator,
  setFoldKernel,
  type FoldKernel,
} from './kernel';
import { bestFoldKernel } from './kernel-wasm';

export { FoldAccumulator, type FoldOptions } from './accumulator';
export { FoldRounds } from './rounds';
export { reduceRealizedWork, reduceRealizedWorkSliced, sumFrames } from './reduce';
export { foldTolerance, firstMismatch, roundsAlmostEqual } from './tolerance';
export { STAGE_BLOCK_BYTES, stagedBlocksInUse } from './staging';
export { getFoldKernel, receiveArena, releaseAccumulator, setFoldKernel, type FoldKernel };
export { ArenaReader, ReceiveArena, arenaHolding } from './receive-arena';

/** Installs the fold kernel every fold uses: 'best' = WebAssembly SIMD where the runtime has it, else JS. */
export function chooseFoldKernel(which: 'best' | 'js' = 'best'): FoldKernel {
  const k = which === 'js' ? jsFoldKernel : bestFoldKernel();
  setFoldKernel(k);
  return k;
}
