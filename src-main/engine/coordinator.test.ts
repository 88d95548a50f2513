// The coordinator against a fake relay's control connection: Hello/HelloAck,
// ControlFrames to ranks as rank-tagged Data, TimingMsg from ranks, and the
// heartbeat staleness that declares a silent rank dead.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { encodeChannelMagic } from '@shared/wire/channel';
import { decodeControlFrame, encodeControlFrame, MSG_KIND_TIMING } from '@shared/wire/control-frame';
import { decodeControlMsg, encodeTimingMsg } from '@shared/wire/control-msgs';
import { decodeMuxRecord, encodeMuxRecord } from '@shared/wire/mux';
import { saltFromHex } from '@shared/wire/salt';
import { nodeMac } from '../crypto/node-mac';
import { Conn, closeServer, listen, serverPort } from './conn';
import { Coordinator, type CoordinatorEvent } from './coordinator';
import { DeadRanks } from './dead-ranks';
import { PortMux } from './port-mux';
import { RawPeer } from './testing/peer';

const mac = nodeMac(saltFromHex('112233445566778899aabbccddeeff00'));
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(worldSize: number, stalenessMs = 60_000) {
  const dead = new DeadRanks(worldSize);
  const coordinator = new Coordinator({ worldSize, mac, controlVersion: 2, dead, stalenessMs });
  const events: CoordinatorEvent[] = [];
  coordinator.on((e) => events.push(e));
  const server = await listen();
  const mux = new PortMux(server, { handlers: { control: (c, h) => coordinator.attach(c, h) } });
  cleanups.push(async () => {
    coordinator.stop();
    mux.destroyAll();
    await closeServer(server);
  });
  const relay = async (host: string, ranks: number[]) => {
    const p = await RawPeer.connect(serverPort(server));
    cleanups.push(() => p.destroy());
    p.write(
      encodeChannelMagic('control'),
      encodeMuxRecord({ kind: 'Control', msg: { type: 'Hello', host, ranks } }, mac),
    );
    return p;
  };
  return { coordinator, events, dead, relay };
}

const timing = (rank: number) =>
  encodeMuxRecord(
    {
      kind: 'Data',
      rank,
      payload: encodeControlFrame(
        {
          version: 2,
          msgKind: MSG_KIND_TIMING,
          payload: encodeTimingMsg({ type: 'Heartbeat', rank, stepCount: 3 }),
        },
        mac,
      ),
    },
    mac,
  );

describe('coordinator (control channel)', () => {
  it('acks Hello, sends ControlFrames as rank-tagged Data, and reads TimingMsg from ranks', async () => {
    const { coordinator, events, relay } = await setup(2);
    const p = await relay('h0', [0, 1]);
    expect(decodeMuxRecord((await p.readMux())!, mac)).toEqual({
      kind: 'Control',
      msg: { type: 'HelloAck' },
    });
    await expect.poll(() => coordinator.ready).toBe(true);
    expect(coordinator.send(1, { type: 'SyncNow' })).toBe(true);
    const rec = decodeMuxRecord((await p.readMux())!, mac) as {
      kind: 'Data';
      rank: number;
      payload: Uint8Array;
    };
    expect(rec.kind).toBe('Data');
    expect(rec.rank).toBe(1);
    expect(decodeControlMsg(decodeControlFrame(rec.payload, mac, { version: 2 }).payload)).toEqual({
      type: 'SyncNow',
    });
    p.write(timing(0));
    await expect
      .poll(() => events.some((e) => e.type === 'timing' && e.rank === 0 && e.msg.type === 'Heartbeat'))
      .toBe(true);
    expect(coordinator.send(5, { type: 'SyncNow' })).toBe(false);
  });

  it('broadcasts to the ranks behind one relay in one write, each record in rank order', async () => {
    const { coordinator, relay } = await setup(3);
    const p = await relay('h0', [0, 1, 2]);
    await p.readMux(); // HelloAck
    await expect.poll(() => coordinator.ready).toBe(true);
    const send = vi.spyOn(Conn.prototype, 'send');
    expect(coordinator.broadcast({ type: 'SyncNow' }, [2, 0, 1])).toBe(3);
    expect(send).toHaveBeenCalledTimes(1);
    send.mockRestore();
    const ranks: number[] = [];
    for (let i = 0; i < 3; i++) {
      const rec = decodeMuxRecord((await p.readMux())!, mac) as {
        kind: 'Data';
        rank: number;
        payload: Uint8Array;
      };
      expect(decodeControlMsg(decodeControlFrame(rec.payload, mac, { version: 2 }).payload)).toEqual({
        type: 'SyncNow',
      });
      ranks.push(rec.rank);
    }
    expect(ranks).toEqual([2, 0, 1]);
  });

  it('rejects ranks announced twice and out of range', async () => {
    const { events, relay } = await setup(2);
    const a = await relay('h0', [0]);
    await a.readMux();
    const b = await relay('h1', [0]);
    await b.closedByPeer();
    const c = await relay('h2', [7]);
    await c.closedByPeer();
    const errors = events.flatMap((e) => (e.type === 'error' ? [e.message] : []));
    expect(errors[0]).toMatch(/rank 0 announced twice/);
    expect(errors[1]).toMatch(/rank 7 out of range/);
  });

  it('declares a rank dead when its heartbeats stop for longer than the staleness', async () => {
    const { events, dead, relay } = await setup(2, 300);
    const p = await relay('h0', [0, 1]);
    await p.readMux();
    // Rank 0 keeps beating, rank 1 is silent.
    const beat = setInterval(() => p.write(timing(0)), 50);
    cleanups.push(() => clearInterval(beat));
    await expect.poll(() => dead.isDead(1), { timeout: 5000 }).toBe(true);
    expect(dead.isDead(0)).toBe(false);
    expect(events.find((e) => e.type === 'stale')).toMatchObject({ rank: 1 });
  });
});
