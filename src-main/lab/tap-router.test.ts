// Taps as the window's source: a real cluster (a controller, two relays and
// four rank processes, CLI roles) whose relays each dial a tap started
// through the router's startTap command. The window's events must carry the
// tapped units of both taps in one sequence (both channels, named
// h0.uplink.* and h1.uplink.*), the hosts and ranks from the Hellos, rounds
// from the Broadcasts, and the bytes for the inspector; lab commands answer
// TAP_VIEW; "Back to the lab" returns to the live topology; a stopped tap
// refuses new connections. A capture (the lab's own pcapng export of a real
// run) opens through openCapture as a trace.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { spawnSync, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { LabBatch, LabEvent } from '@shared/lab/contract';
import type { UnitRecord } from '@shared/lab/records';
import { validateLabCommand } from '@shared/lab/validate';
import { LabHost } from './lab-host';
import { TopologySession } from './topology-session';
import { TapRouter } from './tap-router';
import { exportTraceFileToPcapng } from './trace/pcapng';
import { killAll, startController, startHost } from '../../e2e/cluster-roles';

const SALT = '7a9c0ffee0000000000000000000abcd';
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const started: ChildProcess[] = [];
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  killAll(started);
  for (const c of cleanups.splice(0)) await c();
});

function makeRouter() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-taprouter-'));
  const tracesDir = path.join(dir, 'traces');
  fs.mkdirSync(tracesDir);
  const host = new LabHost(new TopologySession(), { tracesDir, workDir: path.join(dir, 'work') });
  fs.mkdirSync(path.join(dir, 'work'));
  const router = new TapRouter(host, { tracesDir, workDir: path.join(dir, 'captures') });
  const events: LabEvent[] = [];
  router.subscribe((b: LabBatch) => events.push(...b.events));
  cleanups.push(async () => {
    await router.shutdown();
    await host.shutdown();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return { router, events, tracesDir, dir };
}

const recordsOf = (events: LabEvent[]): UnitRecord[] =>
  events.flatMap((e) => (e.type === 'records' ? e.records : []));

describe('TapRouter: live taps as the window source', () => {
  it('streams a real two-host cluster through one tap per host uplink into one view, and goes back to the lab', async () => {
    const { router, events } = makeRouter();
    const { controller, port } = await startController(SALT, 4, started);
    const tapPorts: number[] = [];
    for (const name of ['h0.uplink', 'h1.uplink']) {
      // The command as the window sends it, through the transports' validator.
      const cmd = validateLabCommand({
        type: 'startTap',
        tap: {
          listenHost: '127.0.0.1',
          listenPort: 0,
          upstreamHost: '127.0.0.1',
          upstreamPort: port,
          saltHex: SALT,
          name,
        },
      });
      const reply = await router.command(cmd);
      if (!reply.ok || !('taps' in reply)) throw new Error(JSON.stringify(reply));
      tapPorts.push(reply.taps.at(-1)!.boundPort);
    }
    expect(tapPorts.every((p) => p > 0)).toBe(true);
    expect(events.filter((e) => e.type === 'view').at(-1)).toEqual({
      type: 'view',
      view: { kind: 'tap', taps: 2 },
    });

    const hosts = await Promise.all(
      [0, 1].map((h) =>
        startHost(
          {
            salt: SALT,
            ranks: [2 * h, 2 * h + 1],
            worldSize: 4,
            controllerPort: tapPorts[h]!,
            rounds: 3,
            host: `h${h}`,
          },
          started,
        ),
      ),
    );
    for (const { relay, ranks } of hosts) {
      for (const r of ranks) {
        const { code, out, err } = await r.done;
        expect(code, err).toBe(0);
        expect(JSON.parse(out).verdict).toBe('ok');
      }
      expect((await relay.done).code).toBe(0);
    }
    const c = await controller.done;
    expect(c.code, c.err).toBe(0);
    expect(JSON.parse(c.out)).toMatchObject({ roundsCompleted: 3, verdict: 'ok' });
    // The decoder runs beside the path, each connection in its own turns: the
    // control link's RankExits can be decoded before the data link's last
    // Broadcast. Wait for both (the counters are compared exactly below), then flush.
    const ctlLinks = JSON.parse(c.out).links as { id: string; bytesUp: number; bytesDown: number }[];
    const dataSettled = async () => {
      const s = await router.command({ type: 'snapshot' });
      return (
        s.ok &&
        ['h0.uplink.data', 'h1.uplink.data'].every((id) => {
          const tap = s.snapshot.links.find((l) => l.id === id);
          const ctl = ctlLinks.find((l) => l.id === id);
          return tap && ctl && tap.bytesUp === ctl.bytesUp && tap.bytesDown === ctl.bytesDown;
        })
      );
    };
    for (
      let i = 0;
      i < 50 && (recordsOf(events).filter((r) => r.kind === 'RankExit').length < 4 || !(await dataSettled()));
      i++
    )
      await new Promise((r) => setTimeout(r, 100));
    router.feed.flush();

    const records = recordsOf(events);
    expect(new Set(records.map((r) => r.link))).toEqual(
      new Set(['h0.uplink.data', 'h0.uplink.control', 'h1.uplink.data', 'h1.uplink.control']),
    );
    // One record sequence for both taps.
    expect(records.map((r) => r.seq)).toEqual(records.map((_, i) => i));
    expect(records.filter((r) => r.verdict !== 'ok')).toEqual([]);
    expect(records.filter((r) => r.kind === 'HostFrame')).toHaveLength(6);
    expect(records.filter((r) => r.kind === 'Broadcast')).toHaveLength(6);
    const rounds = events.flatMap((e) => (e.type === 'round' ? [e.report] : []));
    expect(rounds.map((r) => r.round)).toEqual([0, 1, 2]);
    expect(
      rounds.every((r) => r.verdict === 'unchecked' && r.uplinkBytesPerHost.every((b) => b > 4096)),
    ).toBe(true);
    // The controller's own counters equal what the taps saw on each data link.
    const snap = await router.command({ type: 'snapshot' });
    if (!snap.ok) throw new Error(snap.message);
    expect(snap.snapshot.hosts.map((h) => h.ranks)).toEqual([
      [0, 1],
      [2, 3],
    ]);
    // Each rank's RankExit crossed a tap: the view says exited, not alive, and its hosts stopped.
    expect(snap.snapshot.ranks.map((r) => [r.rank, r.state])).toEqual([
      [0, 'exited'],
      [1, 'exited'],
      [2, 'exited'],
      [3, 'exited'],
    ]);
    expect(snap.snapshot.hosts.map((h) => h.state)).toEqual(['stopped', 'stopped']);
    for (const id of ['h0.uplink.data', 'h1.uplink.data']) {
      const ctl = ctlLinks.find((l) => l.id === id)!;
      const tap = snap.snapshot.links.find((l) => l.id === id);
      expect(tap?.bytesUp, id).toBe(ctl.bytesUp);
      expect(tap?.bytesDown, id).toBe(ctl.bytesDown);
    }

    // The inspector's bytes, with the tap's salt.
    const hf = records.find((r) => r.kind === 'HostFrame')!;
    const bytes = await router.command({ type: 'getRecordBytes', seq: hf.seq });
    expect(bytes.ok && bytes.bytes.saltHex).toBe(SALT);
    expect(bytes.ok && bytes.bytes.hex.slice(0, 8)).toBe('d0170df1');
    // Lab commands do not reach the lab's topology while the taps are shown.
    const kill = await router.command({ type: 'killRank', rank: 0 });
    expect(kill).toMatchObject({ ok: false, error: 'TAP_VIEW' });
    const caught = await router.command({ type: 'recentRecords' });
    expect(caught.ok && caught.view).toEqual({ kind: 'tap', taps: 2 });
    expect(caught.ok && caught.records.length).toBe(records.length);

    // Stop: the listener closes (a new peer is refused); the tap is listed as stopped.
    const stopped = await router.command({ type: 'stopTap', id: 0 });
    expect(stopped.ok && stopped.taps[0]!.state).not.toBe('listening');
    const refused = await new Promise<string>((resolve) => {
      const s = net.connect(tapPorts[0]!, '127.0.0.1');
      s.on('connect', () => resolve('connected'));
      s.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
    });
    expect(refused).toBe('ECONNREFUSED');

    // Back to the lab: the view is live again, the lab host answers.
    events.length = 0;
    const back = await router.command({ type: 'closeTrace' });
    expect(back.ok && back.view).toEqual({ kind: 'live' });
    expect(events.find((e) => e.type === 'view')).toEqual({ type: 'view', view: { kind: 'live' } });
    const showAgain = await router.command({ type: 'showTaps' });
    expect(showAgain.ok && showAgain.view).toEqual({ kind: 'tap', taps: 2 });
  });

  it('stopping a tap closes its listener; a connection already open keeps flowing until its peer ends it', async () => {
    const { router } = makeRouter();
    const echo = net.createServer((s) => s.pipe(s));
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise<void>((r) => echo.close(() => r())));
    const started = await router.command({
      type: 'startTap',
      tap: {
        listenHost: '127.0.0.1',
        listenPort: 0,
        upstreamHost: '127.0.0.1',
        upstreamPort: (echo.address() as net.AddressInfo).port,
        saltHex: SALT,
      },
    });
    if (!started.ok) throw new Error(started.message);
    const port = started.taps[0]!.boundPort;
    const c = net.connect(port, '127.0.0.1');
    await new Promise((r) => c.once('connect', r));
    const roundTrip = (text: string) =>
      new Promise<string>((resolve) => {
        c.once('data', (b: Buffer) => resolve(b.toString()));
        c.write(text);
      });
    expect(await roundTrip('before')).toBe('before');
    const stopped = await router.command({ type: 'stopTap', id: 0 });
    expect(stopped.ok && stopped.taps[0]).toMatchObject({ state: 'stopping', connections: 1 });
    // The open connection is still forwarded, unchanged.
    expect(await roundTrip('after the stop')).toBe('after the stop');
    const refused = await new Promise<string>((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      s.on('connect', () => resolve('connected'));
      s.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
    });
    expect(refused).toBe('ECONNREFUSED');
    // Its peer ends it: the tap is then stopped.
    c.end();
    await expect
      .poll(async () => {
        const l = await router.command({ type: 'listTaps' });
        return l.ok ? l.taps[0]!.state : 'error';
      })
      .toBe('stopped');
  });

  it('a taken port, a bad salt and a bad address are named errors', async () => {
    const { router } = makeRouter();
    const busy = net.createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise<void>((r) => busy.close(() => r())));
    const taken = (busy.address() as net.AddressInfo).port;
    const r = await router.command({
      type: 'startTap',
      tap: {
        listenHost: '127.0.0.1',
        listenPort: taken,
        upstreamHost: '127.0.0.1',
        upstreamPort: 1,
        saltHex: SALT,
      },
    });
    expect(r).toMatchObject({ ok: false, error: 'EADDRINUSE' });
    expect(() =>
      validateLabCommand({
        type: 'startTap',
        tap: {
          listenHost: '127.0.0.1',
          listenPort: 0,
          upstreamHost: '127.0.0.1',
          upstreamPort: 9,
          saltHex: 'xyz',
        },
      }),
    ).toThrow(/startTap\.tap\.saltHex/);
    expect(() =>
      validateLabCommand({
        type: 'startTap',
        tap: { listenHost: 'a b', listenPort: 0, upstreamHost: '127.0.0.1', upstreamPort: 9, saltHex: SALT },
      }),
    ).toThrow(/listenHost/);
    expect(() => validateLabCommand({ type: 'openCapture', name: '../x.pcap', saltHex: SALT })).toThrow(
      /openCapture\.name/,
    );
  });

  it('opens a capture of a real run as a trace, and names a file that is no capture', async () => {
    const { router, events, tracesDir, dir } = makeRouter();
    const trace = path.join(dir, 'run.trace.ndjson');
    const run = spawnSync(
      process.execPath,
      [
        path.join(root, 'bin', 'relay-lab.mjs'),
        'run',
        '--hosts',
        '1',
        '--ranks-per-host',
        '2',
        '--rounds',
        '2',
        '--model-bytes',
        '4KiB',
        '--salt',
        SALT,
        '--trace',
        trace,
      ],
      { cwd: root, encoding: 'utf8' },
    );
    expect(run.status, run.stderr).toBe(0);
    await exportTraceFileToPcapng(trace, path.join(tracesDir, 'run.pcapng'));
    const reply = await router.command({ type: 'openCapture', name: 'run.pcapng', saltHex: SALT });
    expect(reply.ok, JSON.stringify(reply)).toBe(true);
    if (!reply.ok) return;
    expect(reply.view).toMatchObject({ kind: 'trace', name: 'run.pcapng.trace.ndjson' });
    expect(reply.capture).toMatchObject({ name: 'run.pcapng', undecodable: 0, gapBytes: 0 });
    expect(reply.capture.streams).toBe(6);
    const records = recordsOf(events);
    expect(records.filter((r) => r.kind === 'HostFrame')).toHaveLength(2);
    expect(records.every((r) => r.verdict === 'ok')).toBe(true);

    // A wrong salt: every MAC fails, the links' hosts are unknown (no Hello decodes), and it still opens.
    events.length = 0;
    const wrong = await router.command({ type: 'openCapture', name: 'run.pcapng', saltHex: 'ff'.repeat(16) });
    expect(wrong.ok, JSON.stringify(wrong)).toBe(true);
    expect(wrong.ok && wrong.capture.undecodable).toBeGreaterThan(0);
    expect(recordsOf(events).some((r) => r.verdict === 'HMAC_MISMATCH')).toBe(true);

    fs.writeFileSync(path.join(tracesDir, 'junk.pcap'), 'not a capture at all');
    const bad = await router.command({ type: 'openCapture', name: 'junk.pcap', saltHex: SALT });
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.message).toMatch(/junk\.pcap/);
    const missing = await router.command({ type: 'openCapture', name: 'none.pcap', saltHex: SALT });
    expect(missing).toMatchObject({ ok: false, error: 'NOT_FOUND' });
  });
});
