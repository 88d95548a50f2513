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
import { PER_WRITER } from './two-writers';

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

  it('a topology scenario records each run as a trace with its decisive unit, beside the kept live session', async () => {
    const session = newHost();
    const events: LabEvent[] = [];
    session.subscribe((b) => events.push(...b.events));
    expect(
      await session.command({
        type: 'start',
        config: { ranksPerHost: [1, 1], modelBytes: 4096, rounds: 0, roundIntervalMs: 200 },
      }),
    ).toMatchObject({ ok: true });
    const live = await session.command({ type: 'snapshot' });
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
    // The live session's rounds are paused meanwhile, not stopped.
    expect(snap.ok && snap.snapshot.running && snap.snapshot.roundsPaused).toBe(true);
    const reply = await running;
    if (!reply.ok) throw new Error(reply.message);
    expect(reply.scenario.verdict).toBe('ok');
    const { historical, current } = reply.scenario.pictures!;
    for (const p of [historical, current]) {
      expect(p.trace).toMatch(/^repro-stale-relay-.*\.trace\.ndjson$/);
      expect(p.records).toBeGreaterThan(0);
      expect(p.decisive).toBeDefined();
    }
    // Historical: the per-rank Data the controller refuses ("mixed relay/controller builds?").
    expect(historical.decisive!.label).toMatch(/Data/);
    expect(current.units.some((u) => u.kind === 'HostFrame')).toBe(true);
    // The live session is back: same session, rounds running, interval kept.
    const after = await session.command({ type: 'snapshot' });
    expect(after.ok && after.snapshot).toMatchObject({
      running: true,
      roundsPaused: false,
      startedAt: live.ok ? live.snapshot.startedAt : -1,
      config: { roundIntervalMs: 200 },
    });
    await session.shutdown();
  });

  it('socket-level runs are traced from the side: the dropped partial frame and the interleaving are the decisive units', async () => {
    const host = newHost();
    const desync = await host.command({ type: 'runScenario', name: 'mid-frame-desync' });
    if (!desync.ok) throw new Error(desync.message);
    expect(desync.scenario.verdict).toBe('ok');
    const h = desync.scenario.pictures!.historical;
    expect(h.trace).toMatch(/^repro-mid-frame-desync-historical-/);
    // The 4 records whole on the wire's lane, and on the reader's lane the header it read after the drop.
    expect(h.records).toBe(5);
    expect(h.lanes).toEqual(['h0.uplink.data', 'h0.uplink.data (NaiveReader view)']);
    expect(h.decisive!.why).toMatch(/dropped the first \d+ bytes of record \d+ .* as a header: BAD_MAGIC/);
    console.log(`mid-frame-desync historical decisive: ${h.decisive!.label}: ${h.decisive!.why}`);
    expect(h.decisive!.lane).toBe(1);
    expect(h.decisive!.mark).toMatchObject({
      offset: 0,
      length: 4,
      label: 'read as a record magic (BAD_MAGIC)',
    });
    expect(h.units.find((u) => u.seq === h.decisive!.seq)!.ok).toBe(false);
    expect(desync.scenario.pictures!.current.decisive!.mark!.length).toBe(25);

    const writers = await host.command({ type: 'runScenario', name: 'two-writers' });
    if (!writers.ok) throw new Error(writers.message);
    expect(writers.scenario.verdict).toBe('ok');
    const w = writers.scenario.pictures!.historical;
    expect(w.decisive!.why).toMatch(/rejected/);
    expect(w.units.some((u) => !u.ok)).toBe(true);
    // One writer: every record arrives whole, as many as were sent, and reads ok. Its payloads are
    // filler, not RoundFrames: opaque to the mux layer, as to flodl's read_record (wire/nested.ts).
    const one = writers.scenario.pictures!.current;
    expect(one.units.map((u) => [u.kind, u.ok])).toEqual(
      Array.from({ length: 2 * PER_WRITER }, () => ['HostFrame', true]),
    );
    expect(writers.scenario.pictures!.current.decisive!.why).toMatch(/every record went out whole/);

    const hostile = await host.command({ type: 'runScenario', name: 'hostile-length' });
    if (!hostile.ok) throw new Error(hostile.message);
    expect(hostile.scenario.verdict).toBe('ok');
    for (const p of [hostile.scenario.pictures!.historical, hostile.scenario.pictures!.current]) {
      expect(p.units.some((u) => !u.ok)).toBe(true);
      expect(p.decisive!.mark).toMatchObject({ offset: 13, length: 4 });
    }
    await host.shutdown();
  });

  it('the capped reader, the replayed ControlFrame and the stopped peer are traced too, each with its decisive unit', async () => {
    const host = newHost();
    const pictures = async (name: string) => {
      const r = await host.command({ type: 'runScenario', name });
      if (!r.ok) throw new Error(r.message);
      expect(r.scenario.verdict, name).toBe('ok');
      const { historical, current } = r.scenario.pictures!;
      for (const p of [historical, current]) {
        expect(p.trace, name).toMatch(new RegExp(`^repro-${name}-`));
        expect(p.decisive, name).toBeDefined();
      }
      const at = (p: typeof historical) => p.units.find((u) => u.seq === p.decisive!.seq)!;
      return { historical, current, at };
    };

    // 8 ranks x 64 rounds of Data records through the capped reader, every one whole and verified.
    const slow = await pictures('slow-uplink');
    for (const p of [slow.historical, slow.current]) {
      expect(p.records).toBe(8 * 64);
      expect(p.units.every((u) => u.kind === 'Data' && u.ok)).toBe(true);
    }
    expect(slow.historical.decisive!.why).toMatch(/already in the unbounded queue/);
    expect(slow.current.decisive!.why).toMatch(/filled the queue to its bound of 64/);

    // Two connections of one link (capture, replay); the replay is the decisive unit, its msg_kind marked.
    const replay = await pictures('control-replay');
    for (const p of [replay.historical, replay.current]) {
      expect(p.units.map((u) => u.kind)).toEqual([
        'controlHandshake',
        'ControlFrame',
        'controlHandshake',
        'ControlFrame',
      ]);
      expect(p.decisive!.seq).toBe(p.units[3].seq);
      expect(p.decisive!.mark).toMatchObject({ offset: 20, length: 4 });
    }
    expect(replay.at(replay.historical).ok).toBe(true);
    expect(replay.historical.decisive!.why).toMatch(/accepted as a Heartbeat/);
    expect(replay.at(replay.current).ok).toBe(false);
    expect(replay.current.decisive!.why).toMatch(/rejected \(HMAC_MISMATCH\)/);

    // The handshake, then the frame the peer began: never completed, its received bytes marked.
    const peer = await pictures('vanished-peer');
    for (const p of [peer.historical, peer.current]) {
      expect(p.units.map((u) => [u.kind, u.ok])).toEqual([
        ['dataHandshake', true],
        ['RoundFrame', false],
      ]);
      expect(p.decisive!.seq).toBe(p.units[1].seq);
      expect(p.decisive!.mark).toMatchObject({ offset: 0, length: 4 + 1000 });
    }
    expect(peer.historical.decisive!.why).toMatch(/still waited after 1500 ms/);
    expect(peer.current.decisive!.why).toMatch(/ended with STARVED/);
    await host.shutdown();
  });

  it("each topology built-in's decisive unit is the one its narrative is about, never a teardown fallback", async () => {
    const host = newHost();
    const picks: Record<string, { label: string; why: string }> = {};
    for (const name of ['idle-nan', 'nagle', 'stale-relay', 'wedged-rank', 'broken-host']) {
      const r = await host.command({ type: 'runScenario', name });
      if (!r.ok) throw new Error(r.message);
      for (const [side, p] of Object.entries(r.scenario.pictures!)) {
        expect(p.decisive, `${name} ${side}`).toBeDefined();
        picks[`${name} ${side}`] = { label: p.decisive!.label, why: p.decisive!.why };
      }
    }
    console.log(
      Object.entries(picks)
        .map(([k, v]) => `${k}: ${v.label}: ${v.why}`)
        .join('\n'),
    );
    // "The last unit of the run" landed idle-nan on "#112 RankExit rank=1": nothing to do with the NaN.
    for (const [k, v] of Object.entries(picks)) {
      expect(v.why, k).not.toMatch(/the last unit of the run/);
      expect(v.label, k).not.toMatch(/RankExit/);
    }
    // idle-nan: the consensus that carries the NaN; flodl 0.7: the idle rank's frame with its tensors elided.
    expect(picks['idle-nan historical']!.label).toMatch(/Broadcast|consensus/);
    expect(picks['idle-nan historical']!.why).toMatch(/made its elements NaN/);
    expect(picks['idle-nan current']!.label).toMatch(/RoundFrame from rank 1/);
    expect(picks['idle-nan current']!.why).toMatch(/tensors elided/);
    expect(picks['nagle historical']!.why).toMatch(/slowest measured round/);
    expect(picks['stale-relay current']!.label).toMatch(/HostFrame/);
    expect(picks['wedged-rank current']!.label).toMatch(/DeclareDead rank=1 on h0\.uplink\.data down/);
    expect(picks['broken-host historical']!.label).toMatch(/consensus/);
    expect(picks['broken-host historical']!.why).toMatch(/scattered while h1 died/);
    await host.shutdown();
    // Ten real runs, each a real topology: about 22 s on a quiet 2-core machine, over 30 s beside a full suite.
  }, 120_000);

  it('an unknown scenario is a named error, not a crash', async () => {
    const reply = await newHost().command({ type: 'runScenario', name: 'nope' });
    expect(reply).toMatchObject({ ok: false, error: 'NOT_FOUND' });
  });
});
