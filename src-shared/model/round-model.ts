// The round-time model: one round's critical path, stage by stage (the
// stages the bench measures, src-shared/lab/round-stages.ts), from a
// machine's measured costs (calibration.ts) and the network's NICs. Pure
// arithmetic; docs/model.md derives every formula.
//
// A round is sequential: no relay can send its HostFrame before its last
// rank's deposit is folded, the controller cannot reduce before the last
// HostFrame, no rank can adopt before the consensus reaches it. Inside a
// stage the work is streamed: bytes cross a NIC while the receiver verifies
// and folds them, so a stage costs its serial parts (encoding before a send,
// latency, a hop) plus the largest of its overlapped parts (each NIC's
// transfer, each CPU's per-byte work). The overlapped part that sets a stage
// is its bound; the largest bound of the round is the bottleneck.
//
// Two placements:
//   local    this machine, as the lab runs it: every relay and the controller
//            share the engine's one thread; host uplinks are loopback,
//            optionally shaped (sweep --uplink-bandwidth); the controller
//            has no NIC of its own; ranks share `cores` with the engine.
//   cluster  one machine per host (its relay on one thread, its ranks on
//            their own cores unless hostCores says fewer) and one controller
//            machine whose NIC carries every host's bytes and whose cores
//            verify and fold the hosts' connections in parallel.
import type { RoundStage } from '../lab/round-stages';
import type { UplinkMode, WireDtype } from '../lab/topology';
import { dataDownBytes, dataUpBytes, roundFrameBytes } from '../sweep/theory';
import type { Calibration } from './calibration';

export type Placement = 'local' | 'cluster';

/** A NIC, each direction: bandwidth in bytes/s (absent: unshaped loopback locally, unlimited in a cluster) and one-way latency. */
export interface Nic {
  bandwidth?: number;
  latencyMs: number;
}

export interface ModelInput {
  /** Ranks per host, one entry per host. */
  ranksPerHost: number[];
  mode: UplinkMode;
  /** Model size per rank at f32 (as the sweep's modelBytes). */
  modelBytes: number;
  dtype: WireDtype;
  placement: Placement;
  /** Every host's NIC (locally: the shaped uplink lane). */
  hostNic: Nic;
  /** The controller's NIC (cluster only; locally the controller is on loopback). */
  controllerNic?: Nic;
  /** Cores per host machine in a cluster (default K + 1: each rank and the relay on its own). */
  hostCores?: number;
  /** Cores of the controller machine (default 128), over which its connections are verified and folded. */
  controllerCores?: number;
}

/** What a term spends: a NIC, a CPU, loopback sockets, or the hops between processes. */
export const RESOURCES = [
  'hops',
  'rankCpu',
  'loopback',
  'relayCpu',
  'hostUplink',
  'hostDownlink',
  'controllerIngress',
  'controllerEgress',
  'controllerCpu',
  'engineCpu',
] as const;
export type Resource = (typeof RESOURCES)[number];

export interface Term {
  resource: Resource;
  ms: number;
  /** Bytes this term moves or processes (0 for hops). */
  bytes: number;
  /** serial: added to the stage; overlap: the stage takes the largest of these. */
  kind: 'serial' | 'overlap';
  what: string;
}

export type ModelStage = 'sync' | RoundStage;

export interface StagePrediction {
  stage: ModelStage;
  ms: number;
  terms: Term[];
  /** The term that set the stage (its largest). */
  boundBy: Resource;
}

export interface NicBytes {
  /** Data bytes through each host's NIC per round, largest host (up, down). */
  hostUp: number;
  hostDown: number;
  /** Data bytes through the controller's NIC per round (all hosts). */
  controllerIn: number;
  controllerOut: number;
}

export interface RoundPrediction {
  mode: UplinkMode;
  placement: Placement;
  roundMs: number;
  frameBytes: number;
  stages: StagePrediction[];
  /** The largest single term of the round: where it goes first. */
  bottleneck: { stage: ModelStage; resource: Resource; ms: number; what: string };
  nicBytes: NicBytes;
}

export class ModelInputError extends Error {
  override readonly name = 'ModelInputError';
}

/** A controller machine for a large cluster: a two-socket server of 2 x 64 cores (docs/model.md). */
export const DEFAULT_CONTROLLER_CORES = 128;

function check(i: ModelInput): void {
  if (i.ranksPerHost.length === 0) throw new ModelInputError('model: at least one host');
  for (const k of i.ranksPerHost)
    if (!Number.isInteger(k) || k < 1)
      throw new ModelInputError(`model: ranks per host must be >= 1, got ${k}`);
  if (!(i.modelBytes >= 4))
    throw new ModelInputError(`model: modelBytes must be at least 4, got ${i.modelBytes}`);
  for (const [name, nic] of [
    ['host NIC', i.hostNic],
    ['controller NIC', i.controllerNic],
  ] as const) {
    if (!nic) continue;
    if (nic.bandwidth !== undefined && !(nic.bandwidth > 0 && Number.isFinite(nic.bandwidth)))
      throw new ModelInputError(`model: ${name} bandwidth must be positive, got ${nic.bandwidth}`);
    if (!(nic.latencyMs >= 0 && Number.isFinite(nic.latencyMs)))
      throw new ModelInputError(`model: ${name} latency must be >= 0, got ${nic.latencyMs}`);
  }
}

/** ms to move `bytes` at `bytesPerS`, 0 when unlimited. */
function wireMs(bytes: number, bytesPerS: number | undefined): number {
  return bytesPerS ? (bytes / bytesPerS) * 1000 : 0;
}

export function predictRound(input: ModelInput, cal: Calibration): RoundPrediction {
  check(input);
  const { mode, placement } = input;
  const local = placement === 'local';
  const Ks = input.ranksPerHost;
  const H = Ks.length;
  const K = Math.max(...Ks);
  const N = Ks.reduce((a, b) => a + b, 0);
  const F = roundFrameBytes(input.modelBytes, input.dtype);
  const up = Ks.map((k) => dataUpBytes(mode, k, F));
  const down = Ks.map((k) => dataDownBytes(mode, k, F));
  const nicBytes: NicBytes = {
    hostUp: Math.max(...up),
    hostDown: Math.max(...down),
    controllerIn: up.reduce((a, b) => a + b, 0),
    controllerOut: down.reduce((a, b) => a + b, 0),
  };
  const hostNic = input.hostNic;
  const ctrlNic: Nic = local ? { latencyMs: 0 } : (input.controllerNic ?? { latencyMs: 0 });
  const ctrlCores = local ? 1 : (input.controllerCores ?? DEFAULT_CONTROLLER_CORES);
  const hostCores = local ? cal.cores : (input.hostCores ?? K + 1);
  // Per byte, ms.
  const sock = 1 / cal.socketBytesPerMs;
  const verify = 1 / cal.verifyBytesPerMs;
  const fold = 1 / cal.foldBytesPerMs;
  // Every MAC pass (sign or check) goes through the same chunked MAC as the streamed verify.
  const mac = verify;
  const copy = 1 / cal.copyBytesPerMs;
  const decode = 1 / cal.decodeBytesPerMs;
  const relayed = mode !== 'direct';
  // A HostFrame or Broadcast inside a mux record carries two MACs (footer and record tag).
  const upFrames = mode === 'fold' ? H : N;
  const macsUp = relayed ? 2 : 1;
  // Locally the relays and the controller are one thread; in a cluster each relay has its own.
  const relayThread = local ? 'engineCpu' : 'relayCpu';
  const ctrlThread = local ? 'engineCpu' : 'controllerCpu';
  const relayRanks = local ? N : K;
  const relayHosts = local ? H : 1;
  // The controller's per-connection work runs over its cores, at most one connection per core.
  const ctrlParallel = Math.max(1, Math.min(ctrlCores, relayed ? H : N));
  const netLatency = hostNic.latencyMs + ctrlNic.latencyMs;
  const msg = cal.cpuPerMessageMs;
  const t = (resource: Resource, ms: number, bytes: number, kind: Term['kind'], what: string): Term => ({
    resource,
    ms,
    bytes,
    kind,
    what,
  });
  const stages: { stage: ModelStage; terms: Term[] }[] = [];
  const add = (stage: ModelStage, terms: Term[]) =>
    stages.push({ stage, terms: terms.filter((x) => x.ms > 0) });

  // SyncNow reaches every rank: coordinator -> relay -> rank (direct: straight to the rank).
  const syncHops = relayed ? 2 : 1;
  add('sync', [
    t('hops', syncHops * cal.hopMs + (local ? 0 : netLatency), 0, 'serial', `${syncHops} hops with SyncNow`),
    t(
      local ? 'engineCpu' : 'relayCpu',
      (relayed ? relayRanks + relayHosts : local ? N : 0) * msg,
      0,
      'serial',
      'SyncNow messages',
    ),
  ]);

  if (relayed) {
    // Each rank's signed frame to its relay over loopback; the relay reads (its end of the
    // socket: half a loopback pass), verifies and folds each deposit as its chunks arrive, on one
    // thread. Fold signs one HostFrame per host, forward K records (a copy and two MACs each).
    const relayWork = sock / 2 + verify + (mode === 'fold' ? fold : 0);
    const perHost = mode === 'fold' ? 1 : K;
    const encode = perHost * F * (copy + 2 * mac);
    add('rankEncodeSend', [
      t('hops', cal.hopMs, 0, 'serial', 'a deposit crosses to the relay'),
      t(relayThread, relayRanks * msg, 0, 'serial', 'deposit messages'),
      t(
        relayThread,
        relayRanks * F * relayWork,
        relayRanks * F,
        'overlap',
        `read, verify${mode === 'fold' ? ' and fold' : ''} ${relayRanks} deposits`,
      ),
      // Locally one thread serves every host: the other hosts' HostFrames are signed meanwhile.
      t(
        relayThread,
        (relayHosts - 1) * encode,
        (relayHosts - 1) * perHost * F,
        'serial',
        'other hosts signed',
      ),
    ]);
    add('relayReceiveVerifyFold', [
      t(
        relayThread,
        encode,
        perHost * F,
        'serial',
        mode === 'fold' ? 'HostFrame copied and signed' : `${K} records signed`,
      ),
    ]);
    // The HostFrames cross the host NICs and the controller's while the controller verifies them.
    // In a cluster the controller folds each frame as it verifies it (its cores split the work);
    // locally the engine reduces once every HostFrame is in (the consensus stage).
    const ctrlVerify = (upFrames * F * (macsUp * verify + (local ? 0 : fold))) / ctrlParallel;
    add('uplink', [
      t('hops', netLatency, 0, 'serial', 'uplink latency'),
      local && !hostNic.bandwidth
        ? t('loopback', (upFrames * F * sock) / 2, upFrames * F, 'overlap', 'HostFrames over loopback')
        : t(
            'hostUplink',
            wireMs(nicBytes.hostUp, hostNic.bandwidth),
            nicBytes.hostUp,
            'overlap',
            'host NIC, up',
          ),
      t(
        'controllerIngress',
        wireMs(nicBytes.controllerIn, ctrlNic.bandwidth),
        nicBytes.controllerIn,
        'overlap',
        'controller NIC, in',
      ),
      t(
        ctrlThread,
        ctrlVerify,
        upFrames * F,
        'overlap',
        `controller verifies ${upFrames} frames (${macsUp} MACs)`,
      ),
    ]);
  } else {
    // Direct: every rank's frame straight to the controller through its host's NIC.
    // The controller's end of each socket (locally a loopback read), its verify and its fold.
    const ctrlWork = (N * F * ((local ? sock / 2 : 0) + verify + fold)) / ctrlParallel;
    add('rankEncodeSend', [
      t('hops', cal.hopMs + netLatency, 0, 'serial', 'a frame crosses to the controller'),
      local && !hostNic.bandwidth
        ? t('loopback', (N * F * sock) / 2, N * F, 'overlap', `${N} frames over loopback`)
        : t(
            'hostUplink',
            wireMs(nicBytes.hostUp, hostNic.bandwidth),
            nicBytes.hostUp,
            'overlap',
            'host NIC, up',
          ),
      t(
        'controllerIngress',
        wireMs(nicBytes.controllerIn, ctrlNic.bandwidth),
        nicBytes.controllerIn,
        'overlap',
        'controller NIC, in',
      ),
      t(ctrlThread, ctrlWork, N * F, 'overlap', `controller verifies and folds ${N} frames`),
      t(ctrlThread, N * msg, 0, 'serial', 'frame messages'),
    ]);
  }

  add('controller', []);
  // The controller reduces (fold: H HostFrames; forward, direct: every rank's frame) and signs the consensus.
  const reduced = local ? upFrames * F : 0;
  add('consensus', [
    t(ctrlThread, reduced * fold, reduced, 'serial', 'reduce'),
    t(ctrlThread, F * (copy + macsUp * mac), F, 'serial', 'consensus copied and signed'),
  ]);

  // Down: the controller's NIC out, each host's NIC in. Locally the tap sees the Broadcast as it
  // is written, so its shaped transfer shows in the next stage (fanOut, or rankVerify in direct).
  const downTerms = [
    t('hops', netLatency, 0, 'serial', 'downlink latency'),
    local && !hostNic.bandwidth
      ? t(
          'loopback',
          ((relayed ? H : N) * F * sock) / 2,
          (relayed ? H : N) * F,
          'overlap',
          'consensus over loopback',
        )
      : t(
          'hostDownlink',
          wireMs(nicBytes.hostDown, hostNic.bandwidth),
          nicBytes.hostDown,
          'overlap',
          'host NIC, down',
        ),
    t(
      'controllerEgress',
      wireMs(nicBytes.controllerOut, ctrlNic.bandwidth),
      nicBytes.controllerOut,
      'overlap',
      'controller NIC, out',
    ),
  ];
  const rankRead = F * (sock / 2 + decode);
  // Ranks adopting at once share the host's cores (with the relay or engine still writing).
  const writeGap = (F * sock) / 2;
  const active = Math.min(local ? N : K, 1 + rankRead / writeGap);
  const contention = Math.max(1, (active + 1) / hostCores);
  const rankTerms = [
    t(
      'rankCpu',
      rankRead * contention,
      F,
      'serial',
      `read and verify the consensus (x${contention.toFixed(2)} for cores)`,
    ),
    t('hops', cal.hopMs, 0, 'serial', 'adopted report'),
  ];
  if (relayed) {
    const fan = [
      t(relayThread, relayHosts * F * mac, relayHosts * F, 'serial', 'relay verifies the Broadcast'),
      // The relay's end of each write (the rank's end is its read, in rankVerify): half a loopback pass.
      t('loopback', (relayRanks * F * sock) / 2, relayRanks * F, 'serial', `fan-out to ${relayRanks} ranks`),
      t(relayThread, relayRanks * msg, 0, 'serial', 'fan-out messages'),
    ];
    if (local) {
      add('broadcast', []);
      add('fanOut', [...downTerms, ...fan]);
    } else {
      add('broadcast', downTerms);
      add('fanOut', fan);
    }
    add('rankVerify', rankTerms);
  } else {
    add('fanOut', local ? [t(ctrlThread, N * msg, 0, 'serial', 'writes to every rank')] : []);
    add('rankVerify', [...downTerms, ...rankTerms]);
  }

  const out: StagePrediction[] = stages.map(({ stage, terms }) => {
    const serial = terms.filter((x) => x.kind === 'serial').reduce((a, x) => a + x.ms, 0);
    const overlap = terms.filter((x) => x.kind === 'overlap');
    const top = [...terms].sort((a, b) => b.ms - a.ms)[0];
    const ms = serial + (overlap.length ? Math.max(...overlap.map((x) => x.ms)) : 0);
    return { stage, ms, terms, boundBy: top?.resource ?? 'hops' };
  });
  let best: RoundPrediction['bottleneck'] = { stage: 'sync', resource: 'hops', ms: 0, what: '' };
  for (const s of out)
    for (const x of s.terms)
      if (x.ms > best.ms) best = { stage: s.stage, resource: x.resource, ms: x.ms, what: x.what };
  return {
    mode,
    placement,
    roundMs: out.reduce((a, s) => a + s.ms, 0),
    frameBytes: F,
    stages: out,
    bottleneck: best,
    nicBytes,
  };
}

/** A predicted stage's ms, 0 where the model has none. */
export function predictedStageMs(p: RoundPrediction, stage: ModelStage): number {
  return p.stages.find((s) => s.stage === stage)?.ms ?? 0;
}
