// "Beyond this machine": the round model carried to a cluster no one machine
// runs (`relay-lab predict`, Explore's tab of that name). Per mode: the
// round, the bottleneck, the bytes through every NIC; fold's lead over the
// other modes; how fast the controller's NIC must be for the bottleneck to
// leave it, and what then; and round time against hosts with the points
// where the bottleneck moves.
import type { UplinkMode, WireDtype } from '../lab/topology';
import type { Calibration } from './calibration';
import { ModelInputError, predictRound, type Nic, type Resource, type RoundPrediction } from './round-model';

export const BEYOND_LIMITS = {
  hosts: [1, 4096],
  ranksPerHost: [1, 16],
  modelBytes: [4, 64 * 2 ** 30],
  bandwidth: [1e6, 1e13],
  latencyMs: [0, 10_000],
  cores: [1, 4096],
} as const;

export interface BeyondInput {
  hosts: number;
  ranksPerHost: number;
  modelBytes: number;
  dtype: WireDtype;
  modes: UplinkMode[];
  hostNic: Required<Nic>;
  controllerNic: Required<Nic>;
  hostCores?: number;
  controllerCores?: number;
}

export interface CurvePoint {
  hosts: number;
  roundMs: number;
  resource: Resource;
}

export interface BeyondMode {
  mode: UplinkMode;
  prediction: RoundPrediction;
  /** The controller NIC (bytes/s, each way) above which the controller's NIC no longer bounds the round; null when it does not now. */
  controllerNicToMove: number | null;
  /** The round with the controller NIC 10 % above that. */
  afterMove: RoundPrediction | null;
  curve: CurvePoint[];
  /** Hosts at which the bottleneck changes along the curve (the first point with the new one). */
  moves: { hosts: number; from: Resource; to: Resource }[];
}

export interface BeyondResult {
  input: BeyondInput;
  modes: BeyondMode[];
  /** Round time of each other mode over fold's (fold's lead), now and with the faster controller NIC. */
  lead: Partial<Record<UplinkMode, number>>;
  leadAfterMove: Partial<Record<UplinkMode, number>>;
}

const CONTROLLER_NIC: ReadonlySet<Resource> = new Set(['controllerIngress', 'controllerEgress']);

/** One-line, named errors for out-of-range input (the CLI exits 2 with them). */
export function checkBeyond(i: BeyondInput): void {
  const range = (name: string, v: number, [lo, hi]: readonly [number, number], int = false) => {
    if (!Number.isFinite(v) || v < lo || v > hi || (int && !Number.isInteger(v)))
      throw new ModelInputError(
        `${name} must be ${int ? 'a whole number ' : ''}from ${lo} to ${hi}, got ${v}`,
      );
  };
  range('hosts', i.hosts, BEYOND_LIMITS.hosts, true);
  range('ranks per host', i.ranksPerHost, BEYOND_LIMITS.ranksPerHost, true);
  range('model bytes', i.modelBytes, BEYOND_LIMITS.modelBytes, true);
  range('host NIC bandwidth (B/s)', i.hostNic.bandwidth, BEYOND_LIMITS.bandwidth);
  range('controller NIC bandwidth (B/s)', i.controllerNic.bandwidth, BEYOND_LIMITS.bandwidth);
  range('host NIC latency (ms)', i.hostNic.latencyMs, BEYOND_LIMITS.latencyMs);
  range('controller NIC latency (ms)', i.controllerNic.latencyMs, BEYOND_LIMITS.latencyMs);
  if (i.hostCores !== undefined) range('host cores', i.hostCores, BEYOND_LIMITS.cores, true);
  if (i.controllerCores !== undefined)
    range('controller cores', i.controllerCores, BEYOND_LIMITS.cores, true);
  if (i.modes.length === 0) throw new ModelInputError('at least one mode');
}

function predictAt(
  i: BeyondInput,
  mode: UplinkMode,
  cal: Calibration,
  hosts = i.hosts,
  ctrl = i.controllerNic,
) {
  return predictRound(
    {
      ranksPerHost: new Array<number>(hosts).fill(i.ranksPerHost),
      mode,
      modelBytes: i.modelBytes,
      dtype: i.dtype,
      placement: 'cluster',
      hostNic: i.hostNic,
      controllerNic: ctrl,
      hostCores: i.hostCores,
      controllerCores: i.controllerCores,
    },
    cal,
  );
}

/** 1, 2, 4, ... up to `max`, and `max` itself. */
export function hostSteps(max: number): number[] {
  const out: number[] = [];
  for (let h = 1; h < max; h *= 2) out.push(h);
  out.push(max);
  return out;
}

/** The bandwidth at which the controller NIC's largest term equals the round's largest other term. */
function controllerNicToMove(p: RoundPrediction, bandwidth: number): number | null {
  if (!CONTROLLER_NIC.has(p.bottleneck.resource)) return null;
  let other = 0;
  for (const s of p.stages)
    for (const t of s.terms) if (!CONTROLLER_NIC.has(t.resource) && t.ms > other) other = t.ms;
  if (other <= 0) return null;
  // A NIC term is bytes / bandwidth: scale the bandwidth until the bottleneck term shrinks to `other`.
  return bandwidth * (p.bottleneck.ms / other);
}

export function predictBeyond(
  i: BeyondInput,
  cal: Calibration,
  curveMax = BEYOND_LIMITS.hosts[1],
): BeyondResult {
  checkBeyond(i);
  const modes = i.modes.map((mode): BeyondMode => {
    const prediction = predictAt(i, mode, cal);
    const need = controllerNicToMove(prediction, i.controllerNic.bandwidth);
    const afterMove =
      need === null ? null : predictAt(i, mode, cal, i.hosts, { ...i.controllerNic, bandwidth: need * 1.1 });
    const steps = [...new Set([...hostSteps(curveMax), i.hosts])].sort((a, b) => a - b);
    const curve = steps.map((hosts) => {
      const p = predictAt(i, mode, cal, hosts);
      return { hosts, roundMs: p.roundMs, resource: p.bottleneck.resource };
    });
    const moves = curve.flatMap((pt, k) =>
      k > 0 && pt.resource !== curve[k - 1].resource
        ? [{ hosts: pt.hosts, from: curve[k - 1].resource, to: pt.resource }]
        : [],
    );
    return { mode, prediction, controllerNicToMove: need, afterMove, curve, moves };
  });
  const fold = modes.find((m) => m.mode === 'fold');
  const lead: BeyondResult['lead'] = {};
  const leadAfterMove: BeyondResult['leadAfterMove'] = {};
  if (fold)
    for (const m of modes) {
      if (m.mode === 'fold') continue;
      lead[m.mode] = m.prediction.roundMs / fold.prediction.roundMs;
      // Both modes on the controller NIC that frees the slower of them.
      const fast = Math.max(fold.controllerNicToMove ?? 0, m.controllerNicToMove ?? 0) * 1.1;
      if (fast > 0) {
        const nic = { ...i.controllerNic, bandwidth: Math.max(fast, i.controllerNic.bandwidth) };
        leadAfterMove[m.mode] =
          predictAt(i, m.mode, cal, i.hosts, nic).roundMs / predictAt(i, 'fold', cal, i.hosts, nic).roundMs;
      }
    }
  return { input: i, modes, lead, leadAfterMove };
}
