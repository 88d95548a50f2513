// Round verdicts: the consensus recomputed with flodl's arithmetic
// (consensus.ts), compared bit for bit through digests (round-check.ts); the
// standalone rank's sampled check within tolerance (checker.ts).
export {
  expectedConsensus,
  expectedConsensusSliced,
  frameBodyChunks,
  type Contribution,
  type ConsensusInput,
  type ExpectedConsensus,
} from './consensus';
export {
  compareAdoption,
  elementOf,
  sha256Hex,
  withDigest,
  type AdoptedConsensus,
  type CheckResult,
  type ChunkDigest,
  type Expected,
} from './round-check';
export { checkAdoption, sampleIndices, type AdoptedSample, type SampleCheckResult } from './checker';
