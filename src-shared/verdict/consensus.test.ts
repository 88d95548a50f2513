// The verdict's recomputation against the real fold chain: ranks' frames built
// as a lab rank builds them, each host folded by the FoldAccumulator in a
// chosen merge order, the controller's reduceRealizedWork over the HostFrames
// in connection order. The two must agree bit for bit (through the digest the
// rounds compare), and a single wrong bit anywhere must be a mismatch.
import { describe, expect, it } from 'vitest';
import { FoldAccumulator, reduceRealizedWork, setFoldKernel, getFoldKernel } from '../fold/index';
import { jsFoldKernel } from '../fold/kernel';
import { bestFoldKernel } from '../fold/kernel-wasm';
import { DTYPE_BF16, DTYPE_F32, ROUND_KIND_MODEL } from '../wire/constants';
import type { RoundFrame } from '../wire/round-frame';
import { elidedTensor, tensorFromValues, type TensorEntry } from '../wire/tensor';
import { fillValues, modelLayout, rankMass, type ModelLayout } from '../synthetic';
import {
  compareAdoption,
  elementOf,
  expectedConsensus,
  frameBodyChunks,
  sha256Hex,
  withDigest,
  type Contribution,
} from './index';

/** A lab rank's frame (rank-runner.ts): values pre-scaled by the mass in f32, in the wire dtype; elided when idle. */
function rankFrame(
  seed: number,
  round: number,
  dtype: number,
  layout: ModelLayout,
  c: Contribution,
): RoundFrame {
  const mass = rankMass(seed, c.rank, round, c.idle);
  let start = 0;
  const tensors: TensorEntry[] = layout.shapes.map((dims) => {
    const n = dims.reduce((a, b) => a * b, 1);
    const first = start;
    start += n;
    if (mass === 0) return elidedTensor(dtype, dims);
    const v = new Float32Array(n);
    fillValues(seed, c.rank, round, first, v);
    for (let i = 0; i < n; i++) v[i] *= mass;
    return tensorFromValues(dtype, dims, v);
  });
  return { roundKind: ROUND_KIND_MODEL, weight: mass, tensors };
}

/** The engine's path: per host the relay fold in merge order, then the controller's reduce in host order. */
function engineConsensus(
  seed: number,
  round: number,
  dtype: number,
  layout: ModelLayout,
  groups: Contribution[][],
) {
  const hostFrames = groups.map((g) => {
    const acc = new FoldAccumulator();
    g.forEach((c) => acc.deposit(c.rank, rankFrame(seed, round, dtype, layout, c)));
    return acc.result()!;
  });
  return reduceRealizedWork(hostFrames);
}

const TOPOLOGIES: Array<{ name: string; groups: Contribution[][] }> = [
  {
    name: '2 hosts x 3 ranks',
    groups: [
      [{ rank: 0 }, { rank: 1 }, { rank: 2 }],
      [{ rank: 3 }, { rank: 4 }, { rank: 5 }],
    ],
  },
  {
    name: 'merge order 2,0,1 and hosts swapped',
    groups: [
      [{ rank: 5 }, { rank: 3 }, { rank: 4 }],
      [{ rank: 2 }, { rank: 0 }, { rank: 1 }],
    ],
  },
  {
    name: 'an idle rank and a single-rank host',
    groups: [[{ rank: 0 }, { rank: 1, idle: true }], [{ rank: 2 }]],
  },
  {
    name: 'an idle rank first',
    groups: [
      [{ rank: 1, idle: true }, { rank: 0 }, { rank: 2 }],
      [{ rank: 3 }, { rank: 4 }],
    ],
  },
  {
    name: 'forward/direct: one rank per frame',
    groups: [[{ rank: 2 }], [{ rank: 0 }], [{ rank: 1 }], [{ rank: 3 }]],
  },
  { name: 'every rank idle', groups: [[{ rank: 0, idle: true }], [{ rank: 1, idle: true }]] },
];

describe("the verdict's recomputation is flodl's arithmetic, bit for bit", () => {
  const layout = modelLayout(3000 * 4 + 12); // a [11, 256]-ish weight plus a remainder tensor
  for (const kernel of [jsFoldKernel, bestFoldKernel()]) {
    for (const dtype of [DTYPE_BF16, DTYPE_F32]) {
      for (const t of TOPOLOGIES) {
        it(`${t.name}, ${dtype === DTYPE_BF16 ? 'bf16' : 'f32'}, ${kernel.name} kernel, seeds x rounds`, () => {
          const before = getFoldKernel();
          setFoldKernel(kernel);
          try {
            for (const seed of [1, 195381100]) {
              for (let round = 0; round < 4; round++) {
                const exp = withDigest(expectedConsensus({ seed, round, dtype, layout, groups: t.groups }));
                const got = engineConsensus(seed, round, dtype, layout, t.groups);
                const digest = sha256Hex(frameBodyChunks(got));
                expect(digest).toBe(exp.digest);
                const res = compareAdoption(exp, {
                  weight: got.weight,
                  digest,
                  indices: [0, 7],
                  values: [elementOf(got, 0), elementOf(got, 7)],
                });
                expect(res.verdict).toBe('ok');
              }
            }
          } finally {
            setFoldKernel(before);
          }
        });
      }
    }
  }

  it('one wrong element anywhere is a mismatch, named when it is sampled', () => {
    const groups = TOPOLOGIES[0].groups;
    const exp = withDigest(expectedConsensus({ seed: 3, round: 1, dtype: DTYPE_BF16, layout, groups }));
    const got = engineConsensus(3, 1, DTYPE_BF16, layout, groups);
    got.tensors[1].data![3] ^= 1; // one bit of one element of the last tensor
    const digest = sha256Hex(frameBodyChunks(got));
    const at = layout.shapes[0].reduce((a, b) => a * b, 1) + 1; // element 1 of tensor 1
    const sampled = compareAdoption(exp, {
      weight: got.weight,
      digest,
      indices: [0, at],
      values: [elementOf(got, 0), elementOf(got, at)],
    });
    expect(sampled.verdict).toBe('mismatch');
    expect(sampled.message).toMatch(new RegExp(`element ${at} is`));
    const unsampled = compareAdoption(exp, {
      weight: got.weight,
      digest,
      indices: [0],
      values: [elementOf(got, 0)],
    });
    expect(unsampled.verdict).toBe('mismatch');
    expect(unsampled.message).toMatch(/outside the 1 sampled/);
  });

  it('the merge order is part of the arithmetic: the same ranks folded in another order differ in some bits', () => {
    const inOrder = TOPOLOGIES[0].groups;
    const reordered = [[inOrder[0][2], inOrder[0][0], inOrder[0][1]], inOrder[1]];
    const digests = (groups: Contribution[][]) =>
      sha256Hex(
        frameBodyChunks(expectedConsensus({ seed: 9, round: 0, dtype: DTYPE_F32, layout, groups }).frame),
      );
    expect(digests(reordered)).not.toBe(digests(inOrder));
    expect(sha256Hex(frameBodyChunks(engineConsensus(9, 0, DTYPE_F32, layout, reordered)))).toBe(
      digests(reordered),
    );
  });

  it('reports the error against the exact mean as information (bf16 folding costs more than f32)', () => {
    const groups = TOPOLOGIES[0].groups;
    const bf = expectedConsensus({ seed: 5, round: 0, dtype: DTYPE_BF16, layout, groups });
    const f = expectedConsensus({ seed: 5, round: 0, dtype: DTYPE_F32, layout, groups });
    expect(bf.maxAbsErrorVsExactMean).toBeGreaterThan(0);
    expect(bf.maxAbsErrorVsExactMean).toBeLessThan(2 ** -6);
    expect(f.maxAbsErrorVsExactMean).toBeLessThan(bf.maxAbsErrorVsExactMean);
  });
});
