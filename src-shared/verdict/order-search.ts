// The merge order of a relay that does not report it (an external relay, a
// flodl build run as a host's relay): the lab sees the order its ranks'
// frames reached it, and flodl folds in the order it finished reading them,
// which can differ when frames complete together. f32 sums of three or more
// terms depend on that order, so the verdict needs the right one. Here the
// candidates are tried on a few sampled consensus elements (the observed
// order first, then orders differing on one host, then two, ...); the caller
// verifies a match on every element (expectedConsensus and the digest), so
// the verdict stays bit for bit.
import { DTYPE_BF16 } from '../wire/constants';
import { elementValue, rankMass, sentValue } from '../synthetic';
import type { Contribution } from './consensus';

export interface OrderSearchInput {
  seed: number;
  round: number;
  dtype: number;
  /** The observed reduce order: one group per HostFrame, in the controller's order. */
  groups: Contribution[][];
  /** Which groups' order is unknown (may be permuted). */
  free: boolean[];
  /** Sampled elements of the adopted consensus. */
  indices: number[];
  values: number[];
  /** Most candidate orders to try (default 20,000). */
  maxCandidates?: number;
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
function bf16(x: number): number {
  f32[0] = x;
  const b = u32[0];
  u32[0] =
    (b & 0x7fffffff) > 0x7f800000
      ? ((b >>> 16) | 0x40) << 16
      : ((b + 0x7fff + ((b >>> 16) & 1)) >>> 16) << 16;
  return f32[0];
}
const toWire = (dtype: number, x: number) => (dtype === DTYPE_BF16 ? bf16(Math.fround(x)) : Math.fround(x));

function permutations<T>(xs: T[]): T[][] {
  if (xs.length <= 1) return [xs.slice()];
  const out: T[][] = [];
  xs.forEach((x, i) => {
    for (const rest of permutations([...xs.slice(0, i), ...xs.slice(i + 1)])) out.push([x, ...rest]);
  });
  return out;
}

function* subsets(n: number, k: number, from = 0): Generator<number[]> {
  if (k === 0) return yield [];
  for (let i = from; i <= n - k; i++) for (const rest of subsets(n, k - 1, i + 1)) yield [i, ...rest];
}

/** A reduce order under which every sampled element equals the adopted one, or null. */
export function searchMergeOrder(input: OrderSearchInput): Contribution[][] | null {
  const { seed, round, dtype, groups, free, indices, values } = input;
  const n = Math.min(indices.length, values.length, 256);
  if (n === 0) return null;
  // Each contribution's wire value at each sample (mass 0: an idle rank merges nothing).
  const sent = new Map<number, Float64Array>();
  let weight = 0;
  for (const c of groups.flat()) {
    const mass = rankMass(seed, c.rank, round, c.idle);
    weight += mass;
    if (mass === 0) continue;
    const v = new Float64Array(n);
    for (let k = 0; k < n; k++) v[k] = sentValue(dtype, mass, elementValue(seed, c.rank, round, indices[k]));
    sent.set(c.rank, v);
  }
  const inv = Math.fround(1 / weight);
  const matches = (order: Contribution[][]): boolean => {
    const hosts = order.map((g) => g.map((c) => sent.get(c.rank)).filter((v): v is Float64Array => !!v));
    for (let k = 0; k < n; k++) {
      let acc = 0;
      for (const h of hosts) {
        if (h.length === 0) continue;
        let hv: number;
        if (h.length === 1) hv = h[0][k];
        else {
          let s = 0;
          for (const v of h) s = Math.fround(s + v[k]);
          hv = toWire(dtype, s);
        }
        acc = Math.fround(acc + hv);
      }
      let out = toWire(dtype, acc);
      if (weight > 0) out = toWire(dtype, out * inv);
      const want = values[k];
      if (!(out === want || (Number.isNaN(out) && Number.isNaN(want)))) return false;
    }
    return true;
  };
  if (matches(groups)) return groups;
  // Only a host with three or more full deposits has an order that matters.
  const open = groups
    .map((g, i) => i)
    .filter((i) => free[i] && groups[i].filter((c) => sent.has(c.rank)).length >= 3);
  const alternatives = open.map((i) => permutations(groups[i]).slice(1)); // [0] is the observed order
  let budget = input.maxCandidates ?? 20_000;
  for (let k = 1; k <= open.length; k++) {
    for (const which of subsets(open.length, k)) {
      // Every combination of other orders on the hosts in `which`.
      const pick = new Array<number>(k).fill(0);
      for (;;) {
        if (--budget < 0) return null;
        const order = groups.slice();
        which.forEach((w, j) => (order[open[w]] = alternatives[w][pick[j]]));
        if (matches(order)) return order;
        let j = 0;
        while (j < k && ++pick[j] >= alternatives[which[j]].length) pick[j++] = 0;
        if (j === k) break;
      }
    }
  }
  return null;
}
