// The window's sweep commands through the lab host (the routing the window
// uses): validation, progress events, the case traces and the saved sweep in
// the traces folder, reopening it, BUSY and cancel.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { LabEvent } from '@shared/lab/contract';
import { validateLabCommand } from '@shared/lab/validate';
import { LabHost } from '../lab/lab-host';
import { TopologySession } from '../lab/topology-session';

const tracesDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sweep-host-'));
const host = new LabHost(new TopologySession(), { tracesDir });
afterAll(async () => {
  await host.shutdown();
  fs.rmSync(tracesDir, { recursive: true, force: true });
});

describe('sweep commands in the lab host', () => {
  it('validates sweep commands like every other command', () => {
    expect(() => validateLabCommand({ type: 'sweep', spec: { topologies: [[2]] } })).toThrow(/modes/);
    expect(() => validateLabCommand({ type: 'openSweep', name: '../x.sweep.json' })).toThrow(
      /openSweep.name/,
    );
    expect(validateLabCommand({ type: 'saveSweep', format: 'csv' })).toEqual({
      type: 'saveSweep',
      format: 'csv',
    });
  });

  it('runs a sweep with progress events, writes case traces and the JSON, and opens it again', async () => {
    const events: LabEvent[] = [];
    host.subscribe((b) => events.push(...b.events));
    const spec = {
      topologies: [[1], [2]],
      modes: ['fold' as const],
      modelBytes: 1024,
      dtype: 'f32' as const,
      rounds: 2,
    };
    const running = host.command({ type: 'sweep', spec });
    // One at a time.
    await new Promise((r) => setTimeout(r, 50));
    const busy = await host.command({ type: 'sweep', spec });
    expect(busy).toMatchObject({ ok: false, error: 'BUSY' });
    const reply = await running;
    expect(reply.ok).toBe(true);
    if (!reply.ok) return;
    expect(reply.sweep!.cases.map((c) => `${c.topology} ${c.verdict}`)).toEqual(['1x1 ok', '1x2 ok']);
    for (const c of reply.sweep!.cases) expect(fs.existsSync(path.join(tracesDir, c.trace!))).toBe(true);
    const progress = events.flatMap((e) => (e.type === 'sweep' ? [e.progress] : []));
    expect(progress.map((p) => `${p.done}/${p.total} ${p.state}`)).toEqual([
      '0/2 running',
      '1/2 running',
      '1/2 running',
      '2/2 running',
      '2/2 done',
    ]);
    // A case's trace opens like any saved trace.
    const opened = await host.command({ type: 'openTrace', name: reply.sweep!.cases[0].trace! });
    expect(opened).toMatchObject({ ok: true, view: { kind: 'trace' } });
    await host.command({ type: 'closeTrace' });
    const csv = await host.command({ type: 'saveSweep', format: 'csv' });
    expect(csv.ok && fs.readFileSync(csv.sweepFile!.path, 'utf8')).toMatch(/^topology,mode,/);
    const list = await host.command({ type: 'listSweeps' });
    expect(list.ok && list.sweeps!.map((s) => s.name)).toEqual([reply.sweepFile!.name]);
    const again = await host.command({ type: 'openSweep', name: reply.sweepFile!.name });
    expect(again.ok && again.sweep).toEqual(reply.sweep);
  }, 180_000);

  it('cancel keeps the finished cases', async () => {
    const spec = {
      topologies: [[1], [1], [1]],
      modes: ['fold' as const],
      modelBytes: 1024,
      dtype: 'f32' as const,
      rounds: 3,
    };
    const events: LabEvent[] = [];
    const off = host.subscribe((b) => {
      events.push(...b.events);
      if (b.events.some((e) => e.type === 'sweep' && e.progress.finished))
        void host.command({ type: 'cancelSweep' });
    });
    const reply = await host.command({ type: 'sweep', spec });
    off();
    expect(reply.ok).toBe(true);
    if (!reply.ok) return;
    expect(reply.sweep!.complete).toBe(false);
    expect(reply.sweep!.stoppedBy).toBe('cancelled');
    expect(reply.sweep!.cases.length).toBeGreaterThanOrEqual(1);
    expect(reply.sweep!.cases.length).toBeLessThan(3);
    expect(events.some((e) => e.type === 'sweep' && e.progress.state === 'cancelled')).toBe(true);
  }, 180_000);
});
