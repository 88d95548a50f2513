// The reproductions, in the order of the issue (WIRE.md 6 incidents).
import type { ScenarioInfo } from '@shared/lab/contract';
import type { Scenario } from './types';
import { midFrameDesync } from './mid-frame-desync';
import { twoWriters } from './two-writers';
import { vanishedPeer } from './vanished-peer';
import { hostileLength } from './hostile-length';
import { slowUplink } from './slow-uplink';
import { controlReplay } from './control-replay';

export const SCENARIOS: readonly Scenario[] = [midFrameDesync, twoWriters, hostileLength, slowUplink, controlReplay, vanishedPeer];

/** By name ("mid-frame-desync") or number ("1"). */
export function findScenario(key: string): Scenario | undefined {
  const k = key.trim().toLowerCase();
  return SCENARIOS.find((s) => s.name === k || String(s.number) === k);
}

export function scenarioInfos(): ScenarioInfo[] {
  return SCENARIOS.map(({ number, name, title, incident, narrative }) => ({ number, name, title, incident, narrative }));
}
