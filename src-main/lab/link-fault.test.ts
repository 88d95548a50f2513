// Link faults applied live through the session, on real sockets with real
// rank processes: slicing and latency (readers reassemble), a corrupted
// unit (named HMAC error, the host is lost, the others go on), a stall
// mid-frame (the committed reader waits), a blackhole (the barrier names
// who is missing).
import { afterEach, describe, expect, it } from 'vitest';
import type { LabBatch, LabEvent } from '@shared/lab/contract';
import type { RoundReport } from '@shared/lab/records';
import { DEFAULT_TOPOLOGY } from '@shared/lab/topology';
import { pidAlive } from '../engine/rank-process';
import { TopologySession } from './topology-session';

const sessions: TopologySession[] = [];
const pids: number[] = [];
afterEach(async () => {
  for (const s of sessions.splice(0)) await s.stop();
  expect(pids.splice(0).filter(pidAlive)).toEqual([]);
});

// Faults that slow a link must not read as a dead rank on a loaded 2-core
// machine: these tests run at flodl's 30 s staleness (the lab's default).
async function start(staleness: { stalenessMs?: number } = { stalenessMs: 30_000 }) {
  const session = new TopologySession();
  sessions.push(session);
  const events: LabEvent[] = [];
  session.subscribe((b: LabBatch) => events.push(...b.events));
  const reply = await session.command({
    type: 'start',
    config: {
      ...DEFAULT_TOPOLOGY,
      ranksPerHost: [2, 2],
      modelBytes: 8192,
      rounds: 0,
      roundIntervalMs: 0,
      ...staleness,
    },
  });
  expect(reply.ok).toBe(true);
  pids.push(...session.activeCluster!.ranks.map((p) => p.pid!));
  const rounds = () => events.flatMap((e) => (e.type === 'round' ? [e.report] : [])) as RoundReport[];
  /** Error findings, to say why a round lost ranks when one does. */
  const errors = () =>
    events
      .flatMap((e) => (e.type === 'finding' && e.finding.severity === 'error' ? [e.finding.message] : []))
      .join('; ');
  return { session, events, rounds, errors };
}

describe('link faults', () => {
  it('slicing and latency with jitter: every unit is reassembled, rounds verify', async () => {
    const { session, rounds, errors } = await start();
    await session.command({
      type: 'setLinkFault',
      link: 'h0.uplink.data',
      fault: { dir: 'both', sliceBytes: 7, sliceGapMs: 0 },
    });
    await session.command({
      type: 'setLinkFault',
      link: 'h1.r2.data',
      fault: { dir: 'both', latencyMs: 3, jitterMs: 3, sliceBytes: 100 },
    });
    // The faults holding are the engine's state, in the links' views (the window's one source).
    const held = () =>
      Object.fromEntries(session.linkViews().flatMap((l) => (l.fault ? [[l.id, l.fault]] : [])));
    expect(held()).toEqual({
      'h0.uplink.data': { dir: 'both', sliceBytes: 7, sliceGapMs: 0 },
      'h1.r2.data': { dir: 'both', latencyMs: 3, jitterMs: 3, sliceBytes: 100 },
    });
    const before = rounds().length;
    await expect.poll(() => rounds().length, { timeout: 15_000 }).toBeGreaterThanOrEqual(before + 3);
    expect(
      rounds().filter((r) => r.verdict !== 'ok' || r.accepted.length !== 4),
      errors(),
    ).toEqual([]);
    await session.command({ type: 'setLinkFault', link: 'h1.r2.data', fault: null });
    expect(Object.keys(held())).toEqual(['h0.uplink.data']);
  });

  it('a corrupted HostFrame fails its HMAC by name; the host is declared dead and the others go on', async () => {
    const { session, rounds, events } = await start();
    await expect.poll(() => rounds().length, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    await session.command({
      type: 'setLinkFault',
      link: 'h0.uplink.data',
      fault: { dir: 'up', corruptNext: true },
    });
    await expect
      .poll(() => rounds().some((r) => r.accepted.join() === '2,3'), { timeout: 15_000 })
      .toBe(true);
    const hmac = events.find((e) => e.type === 'finding' && e.finding.kind === 'hmac');
    expect(hmac && hmac.type === 'finding' && hmac.finding.message).toMatch(/HMAC verification failed/);
    // The finding points at the unit that failed its MAC.
    const seq = hmac && hmac.type === 'finding' ? hmac.finding.recordSeq : undefined;
    // A one-shot fault does not hold: nothing is listed as active on the link.
    expect(session.linkViews().find((l) => l.id === 'h0.uplink.data')?.fault).toBeUndefined();
    const tap = session.activeCluster!.tap;
    const rec = tap.findRecord(seq!)!;
    expect(rec).toMatchObject({ link: 'h0.uplink.data', verdict: 'HMAC_MISMATCH' });
    // The rejected unit itself is kept (not a 0-byte stand-in): its kind, length and bytes as received.
    expect(rec.kind).not.toBe('rejected');
    expect(rec.length).toBeGreaterThan(25);
    const received = tap.bytesOf(seq!)!.bytes;
    expect(received.length).toBe(rec.captured);
    // Which byte the lab flipped, as sent and as received (one bit, 0x10).
    const c = rec.corruption!;
    expect(c.sent ^ c.received).toBe(0x10);
    expect(c.offset).toBeLessThan(rec.length);
    // A unit the armed fault could hit is kept whole: the flipped byte is in the kept bytes.
    expect(received.length).toBe(rec.length);
    expect(received[c.offset]).toBe(c.received);
    const at = (c.offset - c.windowOffset) * 2;
    expect(c.receivedHex.slice(at, at + 2)).toBe(c.received.toString(16).padStart(2, '0'));
    expect(c.sentHex.slice(at, at + 2)).toBe(c.sent.toString(16).padStart(2, '0'));
    // flodl's words carry both tags; the carried one is the header's auth_tag (bytes 17..25, u64 LE).
    const m = /computed 0x([0-9a-f]{16}), wire carried 0x([0-9a-f]{16})/.exec(rec.flodlError ?? '');
    expect(m, rec.flodlError).not.toBeNull();
    expect(m![2]).toBe(Buffer.from(received.subarray(17, 25)).reverse().toString('hex'));
    expect(m![1]).not.toBe(m![2]);
    expect(rounds().every((r) => r.verdict === 'ok')).toBe(true);
  });

  it('a stall between header and payload: the committed reader waits and the round completes', async () => {
    const { session, rounds, errors } = await start();
    await session.command({
      type: 'setLinkFault',
      link: 'h1.uplink.data',
      fault: { dir: 'down', stallMs: 300 },
    });
    const before = rounds().length;
    await expect.poll(() => rounds().length, { timeout: 15_000 }).toBeGreaterThanOrEqual(before + 2);
    expect(
      rounds().filter((r) => r.verdict !== 'ok' || r.accepted.length !== 4),
      errors(),
    ).toEqual([]);
  });

  it('a blackhole toward a host: its ranks never get the consensus and the barrier names them', async () => {
    // The stall threshold follows the measured round times, not the staleness (the default 30 s).
    const { session, events } = await start({});
    await session.command({
      type: 'setLinkFault',
      link: 'h1.uplink.data',
      fault: { dir: 'down', blackhole: true },
    });
    await expect
      .poll(() => events.some((e) => e.type === 'finding' && e.finding.kind === 'stalled'), {
        timeout: 20_000,
      })
      .toBe(true);
    const stalled = events.find((e) => e.type === 'finding' && e.finding.kind === 'stalled');
    expect(stalled && stalled.type === 'finding' && stalled.finding.message).toMatch(/\[2,3\]/);
    // It points at the last unit of a rank it waits for.
    const seq = stalled && stalled.type === 'finding' ? stalled.finding.recordSeq : undefined;
    expect([2, 3]).toContain(session.activeCluster!.tap.findRecord(seq!)?.rank);
  }, 50_000);

  it('names an unknown link', async () => {
    const { session } = await start();
    const reply = await session.command({
      type: 'setLinkFault',
      link: 'h9.uplink.data',
      fault: { dir: 'up', reset: true },
    });
    expect(reply.ok).toBe(false);
    expect(!reply.ok && reply.message).toMatch(/no link 'h9.uplink.data'/);
  });

  it("refuses a fault on a dead rank's leg and a killed host's links by name; clearing one is still allowed", async () => {
    const { session } = await start({ stalenessMs: 2000 });
    expect((await session.command({ type: 'killRank', rank: 3 })).ok).toBe(true);
    const until = async (cond: () => boolean) => {
      for (let i = 0; i < 300 && !cond(); i++) await new Promise((r) => setTimeout(r, 50));
    };
    await until(() => session.snapshot().ranks.find((r) => r.rank === 3)?.state === 'dead');
    const onDead = await session.command({
      type: 'setLinkFault',
      link: 'h1.r3.data',
      fault: { dir: 'both', latencyMs: 50 },
    });
    expect(onDead).toMatchObject({ ok: false, error: 'LINK_CLOSED' });
    expect(!onDead.ok && onDead.message).toMatch(/rank 3 is dead/);
    expect((await session.command({ type: 'killHost', host: 0 })).ok).toBe(true);
    const onKilled = await session.command({
      type: 'setLinkFault',
      link: 'h0.uplink.data',
      fault: { dir: 'up', corruptNext: true },
    });
    expect(onKilled).toMatchObject({ ok: false, error: 'LINK_CLOSED' });
    expect(!onKilled.ok && onKilled.message).toMatch(/host h0 was killed/);
    // The live ones still take faults, and a clear is never refused.
    expect(
      (
        await session.command({
          type: 'setLinkFault',
          link: 'h1.r2.data',
          fault: { dir: 'up', latencyMs: 1 },
        })
      ).ok,
    ).toBe(true);
    expect((await session.command({ type: 'setLinkFault', link: 'h1.r3.data', fault: null })).ok).toBe(true);
  }, 60_000);
});
