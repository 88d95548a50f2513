// The window's way in: listScenarios and runScenario through the lab host
// (the same object Electron IPC and browser mode drive), with progress
// streamed as log events.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { LabEvent } from '@shared/lab/contract';
import { LabHost } from '../lab-host';
import { TopologySession } from '../topology-session';

const dirs: string[] = [];
function newHost(): LabHost {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-host-scenario-'));
  dirs.push(dir);
  return new LabHost(new TopologySession(), { tracesDir: path.join(dir, 'traces'), workDir: dir });
}
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe('scenarios through the lab contract', () => {
  it('lists the reproductions and runs one, streaming its progress', async () => {
    const session = newHost();
    const events: LabEvent[] = [];
    session.subscribe((b) => events.push(...b.events));
    const list = await session.command({ type: 'listScenarios' });
    expect(list.ok && list.scenarios.length).toBe(11);
    const reply = await session.command({ type: 'runScenario', name: 'control-replay' });
    expect(reply.ok).toBe(true);
    if (!reply.ok) return;
    expect(reply.scenario?.verdict).toBe('ok');
    expect(reply.scenario?.historical.evidence).toMatchObject({ accepted: { msgKind: 'Heartbeat' } });
    expect(reply.scenario?.current.evidence).toMatchObject({ rejected: { code: 'HMAC_MISMATCH' } });
    await expect
      .poll(() =>
        events.some((e) => e.type === 'log' && /scenario control-replay: verdict ok/.test(e.message)),
      )
      .toBe(true);
    expect(
      events.some((e) => e.type === 'log' && /scenario control-replay \[historical\]/.test(e.message)),
    ).toBe(true);
  });

  it("a topology scenario streams its topology's events to the window (findings, records, snapshots)", async () => {
    const session = newHost();
    const events: LabEvent[] = [];
    session.subscribe((b) => events.push(...b.events));
    let done = false;
    const running = session
      .command({ type: 'runScenario', name: 'stale-relay' })
      .finally(() => (done = true));
    // Read-only commands are answered while it runs (they do not queue behind it).
    await expect
      .poll(() =>
        events.some((e) => e.type === 'log' && /scenario stale-relay \[historical\]/.test(e.message)),
      )
      .toBe(true);
    const snap = await session.command({ type: 'snapshot' });
    expect({ ok: snap.ok, scenarioStillRunning: !done }).toEqual({ ok: true, scenarioStillRunning: true });
    const reply = await running;
    expect(reply.ok && reply.scenario?.verdict).toBe('ok');
    await expect
      .poll(() =>
        events.some((e) => e.type === 'finding' && /mixed relay\/controller builds/.test(e.finding.message)),
      )
      .toBe(true);
    expect(events.some((e) => e.type === 'records' && e.records.some((r) => r.kind === 'HostFrame'))).toBe(
      true,
    );
    expect(events.some((e) => e.type === 'snapshot' && e.snapshot.running)).toBe(true);
  });

  it('an unknown scenario is a named error, not a crash', async () => {
    const reply = await newHost().command({ type: 'runScenario', name: 'nope' });
    expect(reply).toMatchObject({ ok: false, error: 'NOT_FOUND' });
  });
});
