// The lab's own cluster (rank processes, relays, controller on loopback) run
// twice with the same seed and salt: once as is, once with a live tap between
// every host's relay and the controller (both channels through it). The taps
// must change nothing (rounds, accepted ranks, verdicts, consensus bytes,
// uplink bytes) and must decode every uplink unit exactly as the engine's
// own per-link recorder saw it.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createHash } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { saltFromHex } from '@shared/wire/salt';
import { nodeMac } from '../crypto/node-mac';
import { Relay } from '../engine/relay';
import { TopologySession } from '../lab/topology-session';
import { loadTrace, type LoadedTrace } from '../lab/trace/ndjson';
import { recordSession } from '../lab/trace/session-recording';
import type { RecordEvent, RoundEvent } from '../lab/trace/format';
import type { TraceLink } from '../lab/trace/format';
import { TapProxy } from './tap-proxy';
import type { DecodedUnit } from './stream-decoder';

const SALT = '5a17c0ffee0000000000000000001234';
const ROUNDS = 3;

interface Tapped {
  link: TraceLink;
  u: DecodedUnit;
}

async function runSession(withTaps: boolean): Promise<{
  trace: LoadedTrace;
  tapped: Tapped[];
  bytes: Map<string, number>;
  bytesAtLastRound: Map<string, number>;
}> {
  const taps: TapProxy[] = [];
  const tapped: Tapped[] = [];
  if (withTaps) {
    const listen = Relay.listen.bind(Relay);
    vi.spyOn(Relay, 'listen').mockImplementation(async (o) => {
      const tap = await TapProxy.start({
        listenPort: 0,
        upstreamHost: o.controllerAddress,
        upstreamPort: o.controllerPort,
        mac: nodeMac(saltFromHex(SALT)),
        snapLen: 256 * 1024,
        onUnit: (link, u) => tapped.push({ link, u }),
      });
      taps.push(tap);
      return listen({ ...o, controllerPort: tap.port });
    });
  }
  const session = new TopologySession({ snapLen: 256 * 1024 });
  await session.start({
    ranksPerHost: [2, 1],
    modelBytes: 64 * 1024,
    rounds: ROUNDS,
    roundIntervalMs: 0,
    saltHex: SALT,
    seed: 7,
  });
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (b: Buffer) => chunks.push(b));
  const recorder = recordSession(session, out, { producer: 'relay-lab test' });
  const bytes = new Map<string, number>();
  const bytesAtLastRound = new Map<string, number>();
  const engineTap = session.activeCluster!.tap;
  const countUplinks = (into: Map<string, number>) => {
    for (const l of engineTap.linkViews())
      if (l.kind === 'uplink') {
        into.set(`${l.id} up`, l.bytesUp);
        into.set(`${l.id} down`, l.bytesDown);
      }
  };
  try {
    await session.finished();
    countUplinks(bytesAtLastRound);
  } finally {
    await session.stop();
    await recorder.close();
    for (const t of taps) await t.close();
    vi.restoreAllMocks();
  }
  // The engine's byte counters once everything is closed (the RankExits of the stop included).
  countUplinks(bytes);
  if (withTaps) expect(taps.length).toBe(2);
  return { trace: await loadTrace(chunks), tapped, bytes, bytesAtLastRound };
}

const records = (t: LoadedTrace) => t.events.filter((e): e is RecordEvent => e.type === 'record');
const rounds = (t: LoadedTrace) =>
  t.events
    .filter((e): e is RoundEvent => e.type === 'round')
    // uplinkBytesPerHost counts the control channel too, whose heartbeats follow the clock: compared per link below.
    .map((e) => ({ round: e.report.round, accepted: e.report.accepted, verdict: e.report.verdict }));
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const broadcasts = (t: LoadedTrace) =>
  records(t)
    .filter((e) => e.record.kind === 'Broadcast')
    .map(
      (e) =>
        `${e.record.link} ${e.record.length} ${e.record.captured === e.record.length ? sha(e.bytes) : 'short'}`,
    )
    .sort();

describe('the lab cluster through a tap on every host uplink', () => {
  afterEach(() => vi.restoreAllMocks());

  it('changes nothing and decodes every uplink unit as the engine saw it', { timeout: 120_000 }, async () => {
    const plain = await runSession(false);
    const tapped = await runSession(true);

    // Same rounds, accepted ranks and verdicts.
    expect(rounds(plain.trace).length).toBe(ROUNDS);
    expect(rounds(tapped.trace)).toEqual(rounds(plain.trace));
    expect(rounds(tapped.trace).every((r) => r.verdict === 'ok')).toBe(true);
    // Same consensus: every Broadcast the controller sent, byte for byte.
    expect(broadcasts(tapped.trace).length).toBe(ROUNDS * 2);
    expect(broadcasts(tapped.trace)).toEqual(broadcasts(plain.trace));
    expect(broadcasts(tapped.trace).some((b) => b.endsWith('short'))).toBe(false);
    // Same data-channel bytes on each uplink once the rounds are done (the control channel's heartbeats
    // depend on timing, and so does the stop: a rank whose exit the controller reads before it closes
    // earns a 27-byte DeclareDead down its host's data channel, which one run sends and the other not).
    for (const k of ['h0.uplink.data up', 'h0.uplink.data down', 'h1.uplink.data up', 'h1.uplink.data down'])
      expect(tapped.bytesAtLastRound.get(k), k).toBe(plain.bytesAtLastRound.get(k));

    // The taps decoded, unit for unit, what the engine recorded on those links.
    const key = (link: string, dir: string, layer: string, kind: string, length: number, verdict: string) =>
      `${link} ${dir} ${layer} ${kind} ${length} ${verdict}`;
    const engine = records(tapped.trace)
      .filter((e) => e.record.link.includes('.uplink.'))
      .map((e) =>
        key(e.record.link, e.record.dir, e.record.layer, e.record.kind, e.record.length, e.record.verdict),
      );
    const seen = tapped.tapped.map(({ link, u }) =>
      key(link.id, u.dir, u.layer, u.kind, u.length, u.verdict === 'ok' ? 'ok' : (u.code ?? '?')),
    );
    const byLink = (xs: string[]) => {
      const m = new Map<string, string[]>();
      for (const x of xs) {
        const [l, d] = x.split(' ');
        m.set(`${l} ${d}`, [...(m.get(`${l} ${d}`) ?? []), x]);
      }
      return Object.fromEntries([...m].sort());
    };
    expect(engine.length).toBeGreaterThan(20);
    expect(byLink(seen)).toEqual(byLink(engine));
    // Every byte the engine counted on an uplink went through a tap and was accounted to a unit.
    for (const [k, n] of tapped.bytes) {
      const [link, dir] = k.split(' ');
      const sum = tapped.tapped
        .filter((x) => x.link.id === link && x.u.dir === dir)
        .reduce((a, x) => a + x.u.length, 0);
      expect(sum, k).toBe(n);
    }
  });
});
