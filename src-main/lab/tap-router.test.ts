// Taps as the window's source: a real cluster (controller, relay and two rank
// processes, CLI roles) whose relay dials a tap started through the router's
// startTap command. The window's events must carry the tapped units (both
// channels, named h0.uplink.*), the hosts and ranks from the Hello, rounds
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
  it('streams a real cluster through a tap into the window events, and goes back to the lab', async () => {
    const { router, events } = makeRouter();
    const { controller, port } = await startController(SALT, 2, started);
    // The command as the window sends it, through the transports' validator.
    const cmd = validateLabCommand({
      type: 'startTap',
      tap: {
        listenHost: '127.0.0.1',
        listenPort: 0,
        upstreamHost: '127.0.0.1',
        upstreamPort: port,
        saltHex: SALT,
        name: 'h0.uplink',
      },
    });
    const reply = await router.command(cmd);
    expect(reply.ok, JSON.stringify(reply)).toBe(true);
    if (!reply.ok || !('taps' in reply)) return;
    const tapPort = reply.taps[0]!.boundPort;
    expect(tapPort).toBeGreaterThan(0);
    expect(events.find((e) => e.type === 'view')).toEqual({ type: 'view', view: { kind: 'tap', taps: 1 } });

    const { relay, ranks } = await startHost(
      { salt: SALT, ranks: [0, 1], worldSize: 2, controllerPort: tapPort, rounds: 3 },
      started,
    );
    for (const r of ranks) {
      const { code, out, err } = await r.done;
      expect(code, err).toBe(0);
      expect(JSON.parse(out).verdict).toBe('ok');
    }
    expect((await relay.done).code).toBe(0);
    const c = await controller.done;
    expect(c.code, c.err).toBe(0);
    expect(JSON.parse(c.out)).toMatchObject({ roundsCompleted: 3, verdict: 'ok' });
    // The decoder runs beside the path: give it its turns, then flush.
    for (let i = 0; i < 50 && !recordsOf(events).some((r) => r.kind === 'RankExit'); i++)
      await new Promise((r) => setTimeout(r, 100));
    router.feed.flush();

    const records = recordsOf(events);
    expect(new Set(records.map((r) => r.link))).toEqual(new Set(['h0.uplink.data', 'h0.uplink.control']));
    expect(records.filter((r) => r.verdict !== 'ok')).toEqual([]);
    expect(records.filter((r) => r.kind === 'HostFrame')).toHaveLength(3);
    expect(records.filter((r) => r.kind === 'Broadcast')).toHaveLength(3);
    expect(records.some((r) => r.kind === 'Hello')).toBe(true);
    const rounds = events.flatMap((e) => (e.type === 'round' ? [e.report] : []));
    expect(rounds.map((r) => r.round)).toEqual([0, 1, 2]);
    expect(rounds.every((r) => r.verdict === 'unchecked' && r.uplinkBytesPerHost[0]! > 4096)).toBe(true);
    // The engine's counters on the controller's side equal what the tap saw on the data link.
    const ctlData = JSON.parse(c.out).links.find((l: { id: string }) => l.id === 'h0.uplink.data');
    const snap = await router.command({ type: 'snapshot' });
    expect(snap.ok && snap.snapshot.hosts).toEqual([{ host: 0, name: 'h0', ranks: [0, 1], state: 'up' }]);
    const tapData = snap.ok ? snap.snapshot.links.find((l) => l.id === 'h0.uplink.data') : undefined;
    expect(tapData?.bytesUp).toBe(ctlData.bytesUp);
    expect(tapData?.bytesDown).toBe(ctlData.bytesDown);

    // The inspector's bytes, with the tap's salt.
    const hf = records.find((r) => r.kind === 'HostFrame')!;
    const bytes = await router.command({ type: 'getRecordBytes', seq: hf.seq });
    expect(bytes.ok && bytes.bytes.saltHex).toBe(SALT);
    expect(bytes.ok && bytes.bytes.hex.slice(0, 8)).toBe('d0170df1');
    // Lab commands do not reach the lab's topology while the taps are shown.
    const kill = await router.command({ type: 'killRank', rank: 0 });
    expect(kill).toMatchObject({ ok: false, error: 'TAP_VIEW' });
    const caught = await router.command({ type: 'recentRecords' });
    expect(caught.ok && caught.view).toEqual({ kind: 'tap', taps: 1 });
    expect(caught.ok && caught.records.length).toBe(records.length);

    // Stop: the listener closes (a new peer is refused); the tap is listed as stopped.
    const stopped = await router.command({ type: 'stopTap', id: 0 });
    expect(stopped.ok && stopped.taps[0]!.state).not.toBe('listening');
    const refused = await new Promise<string>((resolve) => {
      const s = net.connect(tapPort, '127.0.0.1');
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
    expect(showAgain.ok && showAgain.view).toEqual({ kind: 'tap', taps: 1 });
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
