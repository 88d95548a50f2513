// The bench's scale section (`relay-lab bench --scale`): round time and peak
// memory (engine + every rank) over hosts x ranks at one model size, and over
// model sizes at one topology, with a least-squares line through each sweep:
// the slope is the cost of one more rank (or byte), and a "step" is a point
// that sits well above the line (something that does not grow linearly).
import { benchRounds } from './rounds';
import type { MemoryPeak } from './memory';

const KiB = 1024;
const MiB = 1024 * KiB;

export interface ScaleOptions {
  /** [hosts, ranksPerHost] pairs at `gridModelBytes`. */
  grid?: [number, number][];
  gridModelBytes?: number;
  /** Model sizes at `modelsTopology`. */
  models?: number[];
  modelsTopology?: [number, number];
  mode?: 'fold' | 'direct';
  rounds?: number;
  /** Per configuration: a run that cannot finish ends here (reported as incomplete). */
  maxMsPerRun?: number;
  log?: (m: string) => void;
}

export const DEFAULT_GRID: [number, number][] = [
  [1, 1],
  [1, 8],
  [2, 4],
  [4, 2],
  [8, 1],
  [4, 4],
  [8, 8],
];
export const DEFAULT_MODELS = [4 * KiB, 64 * KiB, MiB, 16 * MiB, 64 * MiB, 256 * MiB];

export interface ScalePoint {
  hosts: number;
  ranksPerHost: number;
  ranks: number;
  modelBytes: number;
  medianRoundMs: number;
  verdict: string;
  memory: MemoryPeak | null;
  stagesMedianMs: Record<string, number>;
}

export interface LineFit {
  /** ms per unit of x (per rank, or per MiB). */
  slope: number;
  interceptMs: number;
  r2: number;
  /** Theil-Sen slope (median of pairwise slopes): what the steps are judged against. */
  robustSlope: number;
  /** Points more than 50 % (and 5 units) above the robust line: a step in the cost. */
  steps: { x: number; measuredMs: number; lineMs: number }[];
}

function leastSquares(pts: { x: number; y: number }[]) {
  const n = pts.length;
  const mx = pts.reduce((a, p) => a + p.x, 0) / n;
  const my = pts.reduce((a, p) => a + p.y, 0) / n;
  const sxx = pts.reduce((a, p) => a + (p.x - mx) ** 2, 0);
  const sxy = pts.reduce((a, p) => a + (p.x - mx) * (p.y - my), 0);
  const syy = pts.reduce((a, p) => a + (p.y - my) ** 2, 0);
  const slope = sxx > 0 ? sxy / sxx : 0;
  return { slope, intercept: my - slope * mx, r2: syy > 0 && sxx > 0 ? (sxy * sxy) / (sxx * syy) : 1 };
}

function mid(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/**
 * Least squares y = a + b x (pure). Steps are judged against a robust line
 * (Theil-Sen: the median of the pairwise slopes), which a step does not bend:
 * a point more than 50 % (and 5 units) above it is a step.
 */
export function fitLine(points: { x: number; y: number }[]): LineFit {
  const pts = points.filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y));
  if (pts.length < 2) return { slope: NaN, interceptMs: NaN, r2: NaN, robustSlope: NaN, steps: [] };
  const { slope, intercept, r2 } = leastSquares(pts);
  const pair: number[] = [];
  for (let i = 0; i < pts.length; i++)
    for (let j = i + 1; j < pts.length; j++)
      if (pts[j].x !== pts[i].x) pair.push((pts[j].y - pts[i].y) / (pts[j].x - pts[i].x));
  const robustSlope = pair.length ? mid(pair) : 0;
  const robustIntercept = mid(pts.map((p) => p.y - robustSlope * p.x));
  const steps: LineFit['steps'] = [];
  if (pts.length >= 3)
    for (const p of pts) {
      const lineMs = robustIntercept + robustSlope * p.x;
      if (p.y > 1.5 * Math.max(lineMs, 0) && p.y - lineMs > 5)
        steps.push({ x: p.x, measuredMs: p.y, lineMs });
    }
  return { slope, interceptMs: intercept, r2, robustSlope, steps };
}

async function point(hosts: number, k: number, modelBytes: number, o: ScaleOptions): Promise<ScalePoint> {
  o.log?.(`scale: ${hosts} x ${k} x ${modelBytes} B`);
  const r = await benchRounds(
    o.mode ?? 'fold',
    {
      ranksPerHost: Array.from({ length: hosts }, () => k),
      modelBytes,
      rounds: o.rounds ?? 3,
      // A model-sized round on a loaded machine must not be declared stale.
      stalenessMs: 120_000,
    },
    o.maxMsPerRun ?? 600_000,
  );
  return {
    hosts,
    ranksPerHost: k,
    ranks: hosts * k,
    modelBytes,
    medianRoundMs: r.round.medianMs,
    verdict: r.round.verdict,
    memory: r.round.memory,
    stagesMedianMs: r.round.stages.medianMs as Record<string, number>,
  };
}

export async function benchScale(o: ScaleOptions = {}) {
  const gridModelBytes = o.gridModelBytes ?? 64 * KiB;
  const [mh, mk] = o.modelsTopology ?? [2, 4];
  const byRanks: ScalePoint[] = [];
  for (const [h, k] of o.grid ?? DEFAULT_GRID) byRanks.push(await point(h, k, gridModelBytes, o));
  const byBytes: ScalePoint[] = [];
  for (const b of o.models ?? DEFAULT_MODELS) byBytes.push(await point(mh, mk, b, o));
  const ok = (p: ScalePoint) => p.verdict === 'ok';
  const memFit = (pts: ScalePoint[], x: (p: ScalePoint) => number) =>
    fitLine(
      pts.filter((p) => ok(p) && p.memory).map((p) => ({ x: x(p), y: p.memory!.peakTreeRssBytes / MiB })),
    );
  return {
    byRanks: {
      modelBytes: gridModelBytes,
      points: byRanks,
      roundMsPerRank: fitLine(byRanks.filter(ok).map((p) => ({ x: p.ranks, y: p.medianRoundMs }))),
      peakMiBPerRank: memFit(byRanks, (p) => p.ranks),
    },
    byBytes: {
      topology: `${mh} hosts x ${mk} ranks`,
      points: byBytes,
      roundMsPerMiB: fitLine(byBytes.filter(ok).map((p) => ({ x: p.modelBytes / MiB, y: p.medianRoundMs }))),
      peakMiBPerModelMiB: memFit(byBytes, (p) => p.modelBytes / MiB),
    },
  };
}
