// The reproductions, in the order of the issue (WIRE.md 6 incidents).
import type { ScenarioInfo } from '@shared/lab/contract';
import type { Scenario } from './types';
import { midFrameDesync } from './mid-frame-desync';
import { twoWriters } from './two-writers';
import { vanishedPeer } from './vanished-peer';
import { hostileLength } from './hostile-length';
import { slowUplink } from './slow-uplink';
import { controlReplay } from './control-replay';
import { wedgedRank } from './wedged-rank';
import { idleNaN } from './idle-nan';
import { staleRelay } from './stale-relay';
import { nagle } from './nagle';
import { brokenHost } from './broken-host';

export const SCENARIOS: readonly Scenario[] = [
  midFrameDesync,
  twoWriters,
  wedgedRank,
  hostileLength,
  slowUplink,
  controlReplay,
  idleNaN,
  brokenHost,
  nagle,
  staleRelay,
  vanishedPeer,
];

/** By name ("mid-frame-desync") or number ("1"). */
export function findScenario(key: string): Scenario | undefined {
  const k = key.trim().toLowerCase();
  return SCENARIOS.find((s) => s.name === k || String(s.number) === k);
}

export function scenarioInfos(): ScenarioInfo[] {
  return SCENARIOS.map(({ number, name, title, incident, narrative, historicalBehaviour }) => ({
    number,
    name,
    title,
    incident,
    narrative,
    historicalBehaviour,
  }));
}
