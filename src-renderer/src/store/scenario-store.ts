// Reproductions (the fault lab's scenarios): the list, the one running and
// its result. Progress arrives as engine log lines "scenario NAME [phase]: ...".
import { create } from 'zustand';
import type { ScenarioInfo, ScenarioResult } from '@shared/lab/contract';
import { send } from './lab-store';

export interface ScenarioState {
  open: boolean;
  list: ScenarioInfo[] | null;
  picked: string | null;
  running: string | null;
  result: ScenarioResult | null;
  error: string | null;
}

export const useScenarios = create<ScenarioState>(() => ({
  open: false,
  list: null,
  picked: null,
  running: null,
  result: null,
  error: null,
}));

export async function openScenarios(): Promise<void> {
  useScenarios.setState({ open: true });
  if (useScenarios.getState().list) return;
  const reply = await send({ type: 'listScenarios' });
  if (reply.ok)
    useScenarios.setState({
      list: reply.scenarios ?? [],
      picked: useScenarios.getState().picked ?? reply.scenarios?.[0]?.name ?? null,
    });
  else useScenarios.setState({ error: `${reply.error}: ${reply.message}` });
}

export async function runPickedScenario(): Promise<void> {
  const name = useScenarios.getState().picked;
  if (!name || useScenarios.getState().running) return;
  useScenarios.setState({ running: name, result: null, error: null });
  const reply = await send({ type: 'runScenario', name });
  useScenarios.setState(
    reply.ok
      ? { running: null, result: reply.scenario ?? null }
      : { running: null, error: `${reply.error}: ${reply.message}` },
  );
}
