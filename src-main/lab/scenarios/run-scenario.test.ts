// The runner's judgement: ok only when the bug reproduced and the fix held;
// a side that throws is an error in its evidence, never a crash; a process a
// scenario leaves alive is killed and turns the verdict into an error.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { pidAlive } from '../../engine/rank-process';
import { runScenario } from './run-scenario';
import type { Scenario } from './types';

function scenario(over: Partial<Scenario>): Scenario {
  return {
    number: 0,
    name: 'test',
    title: 'test',
    incident: 'WIRE.md 6.0',
    narrative: 'test',
    historicalBehaviour: 'lab-only historical behaviour: test',
    findingKind: 'rejected',
    historical: async () => ({ reproduced: true, evidence: { a: 1 } }),
    current: async () => ({ held: true, evidence: { b: 2 } }),
    ...over,
  };
}

describe('scenario runner', () => {
  it('verdicts: ok, not-reproduced, not-held', async () => {
    expect((await runScenario(scenario({}))).verdict).toBe('ok');
    expect(
      (await runScenario(scenario({ historical: async () => ({ reproduced: false, evidence: {} }) })))
        .verdict,
    ).toBe('not-reproduced');
    expect(
      (await runScenario(scenario({ current: async () => ({ held: false, evidence: {} }) }))).verdict,
    ).toBe('not-held');
  });

  it('a side that throws is reported as an error with its message', async () => {
    const r = await runScenario(scenario({ current: () => Promise.reject(new Error('socket refused')) }));
    expect(r.verdict).toBe('error');
    expect(r.current).toEqual({ held: false, evidence: { error: 'socket refused' } });
    expect(r.error).toMatch(/current: socket refused/);
  });

  it('a cross-run judge decides both sides and adds to their evidence', async () => {
    const r = await runScenario(
      scenario({
        judge: () => ({ reproduced: false, held: true, historical: { note: 'not on this machine' } }),
      }),
    );
    expect(r.verdict).toBe('not-reproduced');
    expect(r.historical.evidence).toEqual({ a: 1, note: 'not on this machine' });
  });

  it('a process left alive is killed and makes the verdict an error', async () => {
    let pid = 0;
    const r = await runScenario(
      scenario({
        historical: async (ctx) => {
          const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
          pid = child.pid!;
          ctx.track(pid);
          return { reproduced: true, evidence: {} };
        },
      }),
    );
    expect(r.verdict).toBe('error');
    expect(r.processes.leftAlive).toEqual([pid]);
    await expect.poll(() => pidAlive(pid), { timeout: 5000 }).toBe(false);
  });
});
