// The controller's roles over in-memory duplex pairs (no sockets): Hello
// acceptance and the per-host source, a HostFrame used only once verified
// whole, a host declared dead meanwhile contributing nothing, and a HostFrame
// failing its MAC under both policies (issue 16 #8: strict does what flodl's
// reduce does, elastic drops the host and says it is lab-only).
import { afterEach, describe, expect, it } from 'vitest';
import type { LossPolicy } from '@shared/lab/topology';
import { encodeChannelMagic } from '@shared/wire/channel';
import { REC_HOST_FRAME } from '@shared/wire/constants';
import { decodeMuxRecord, encodeMuxHeader, encodeMuxRecord } from '@shared/wire/mux';
import { decodeRoundFrame, encodeRoundFrame } from '@shared/wire/round-frame';
import { saltFromHex } from '@shared/wire/salt';
import { tensorFromValues, tensorValues } from '@shared/wire/tensor';
import { nodeMac } from '../crypto/node-mac';
import { Controller, type ControllerEvent } from './controller';
import { DeadRanks } from './dead-ranks';
import { PortMux } from './port-mux';
import { MemoryListener } from './testing/duplex-pair';
import { RawPeer } from './testing/peer';

const mac = nodeMac(saltFromHex('c3'.repeat(16)));
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function memoryController(worldSize: number, policy: LossPolicy = 'elastic') {
  const dead = new DeadRanks(worldSize);
  const controller = new Controller({
    worldSize,
    mac,
    mode: 'fold',
    policy,
    ceiling: 1 << 20,
    dataVersion: 3,
    dead,
  });
  const events: ControllerEvent[] = [];
  controller.on((e) => events.push(e));
  const listener = new MemoryListener();
  // The port mux takes the listener's connections as it would a server's.
  const mux = new PortMux(listener, { handlers: { data: (c, h) => controller.attach(c, h) } });
  cleanups.push(async () => {
    await controller.stop();
    mux.destroyAll();
  });
  return { controller, dead, events, listener };
}

async function relay(listener: MemoryListener, host: string, ranks: number[]): Promise<RawPeer> {
  const p = RawPeer.wrap(listener.connect());
  cleanups.push(() => p.destroy());
  p.write(
    encodeChannelMagic('data'),
    encodeMuxRecord({ kind: 'Control', msg: { type: 'Hello', host, ranks } }, mac),
  );
  expect(decodeMuxRecord((await p.readMux())!, mac)).toEqual({ kind: 'Control', msg: { type: 'HelloAck' } });
  return p;
}

const frame = (values: number[], weight: number) =>
  encodeRoundFrame({ roundKind: 0, weight, tensors: [tensorFromValues(0, [values.length], values)] }, mac);
const hostFrameRecord = (payload: Uint8Array) => [encodeMuxHeader(REC_HOST_FRAME, 0, payload, mac), payload];
async function broadcast(p: RawPeer) {
  const rec = decodeMuxRecord((await p.readMux())!, mac);
  expect(rec.kind).toBe('Broadcast');
  const f = decodeRoundFrame((rec as { payload: Uint8Array }).payload, mac);
  return { weight: f.weight, values: Array.from(tensorValues(f.tensors[0])) };
}
const turns = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

describe('controller roles over in-memory pairs', () => {
  it('accepts Hello, hands each connection to its source, averages by mass', async () => {
    const { listener, events } = memoryController(3);
    const a = await relay(listener, 'h0', [0, 1]);
    const b = await relay(listener, 'h1', [2]);
    a.write(...hostFrameRecord(frame([4, 6], 2)));
    b.write(...hostFrameRecord(frame([2, 3], 1)));
    for (const p of [a, b]) expect(await broadcast(p)).toEqual({ weight: 3, values: [2, 3] });
    expect(events.find((e) => e.type === 'round')).toMatchObject({ round: 0, hosts: [0, 1], weight: 3 });
  });

  it('a HostFrame is not used before it is whole: a host declared dead mid-frame contributes nothing', async () => {
    const { listener, dead } = memoryController(2);
    const a = await relay(listener, 'h0', [0]);
    const b = await relay(listener, 'h1', [1]);
    const [header, payload] = hostFrameRecord(frame([100, 100], 5));
    a.write(header, payload.subarray(0, 30));
    await turns(20);
    dead.declare(0, 'stale');
    a.write(payload.subarray(30));
    b.write(...hostFrameRecord(frame([4, 8], 2)));
    expect(await broadcast(b)).toEqual({ weight: 2, values: [2, 4] });
  });

  it('elastic (lab-only): a HostFrame failing its MAC drops that host, labelled so; the others go on (issue 16 #8)', async () => {
    const { listener, events, dead } = memoryController(2, 'elastic');
    const a = await relay(listener, 'h0', [0]);
    const b = await relay(listener, 'h1', [1]);
    const [header, payload] = hostFrameRecord(frame([1, 1], 1));
    header[20] ^= 0x01; // the record's own tag
    a.write(header, payload);
    await a.closedByPeer();
    const err = events.find((e) => e.type === 'error') as { code: string; message: string };
    expect(err.code).toBe('HMAC_MISMATCH');
    expect(err.message).toMatch(/elastic policy, lab-only/);
    await expect.poll(() => dead.isDead(0)).toBe(true);
    b.write(...hostFrameRecord(frame([6, 2], 2)));
    expect(await broadcast(b)).toEqual({ weight: 2, values: [3, 1] });
  });

  it('strict: a HostFrame failing its MAC is the reduce error and no host is dropped, as in flodl (issue 16 #8)', async () => {
    const { listener, events, dead, controller } = memoryController(2, 'strict');
    const a = await relay(listener, 'h0', [0]);
    const b = await relay(listener, 'h1', [1]);
    b.write(...hostFrameRecord(frame([6, 2], 2)));
    const [header, payload] = hostFrameRecord(frame([1, 1], 1));
    header[20] ^= 0x01;
    a.write(header, payload);
    await controller.finished();
    const end = events.find((e) => e.type === 'shutdown') as { reason: string; error: boolean };
    expect(end.error).toBe(true);
    expect(end.reason).toMatch(/HMAC verification failed/);
    const err = events.find((e) => e.type === 'error') as { message: string };
    expect(err.message).not.toMatch(/lab-only/);
    expect(dead.count).toBe(0);
    expect(events.some((e) => e.type === 'round')).toBe(false);
  });
});
