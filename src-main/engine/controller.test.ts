// The controller against fake relays on real sockets (WIRE.md 5.4): averages,
// Hello validation, inner HMAC, elastic scatter, stale relay builds, hostile
// lengths and a peer that stalls mid-frame.
import { afterEach, describe, expect, it } from 'vitest';
import { createWasmFoldKernel } from '@shared/fold/kernel-wasm';
import { useFoldKernel } from './testing/fold-kernel';
import { encodeChannelMagic } from '@shared/wire/channel';
import { unitBuffers } from './buffer-pool';
import { REC_HOST_FRAME } from '@shared/wire/constants';
import { decodeMuxRecord, encodeMuxHeader, encodeMuxRecord } from '@shared/wire/mux';
import { decodeRoundFrame, encodeRoundFrame } from '@shared/wire/round-frame';
import { saltFromHex } from '@shared/wire/salt';
import { tensorFromValues, tensorValues } from '@shared/wire/tensor';
import { nodeMac } from '../crypto/node-mac';
import { closeServer, listen, serverPort } from './conn';
import { Controller, type ControllerEvent } from './controller';
import { DeadRanks } from './dead-ranks';
import { PortMux } from './port-mux';
import { RawPeer } from './testing/peer';
import type { LossPolicy } from '@shared/lab/topology';

const SALT = saltFromHex('42'.repeat(16));
const mac = nodeMac(SALT);
const CEILING = 64 * 1024 * 1024;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function startController(
  worldSize: number,
  policy: LossPolicy = 'elastic',
  extra: { starvationMs?: number } = {},
) {
  const dead = new DeadRanks(worldSize);
  const controller = new Controller({
    worldSize,
    mac,
    mode: 'fold',
    policy,
    ceiling: CEILING,
    dataVersion: 3,
    dead,
    ...extra,
  });
  const events: ControllerEvent[] = [];
  controller.on((e) => events.push(e));
  const server = await listen();
  const mux = new PortMux(server, { handlers: { data: (c, h) => controller.attach(c, h) } });
  cleanups.push(async () => {
    await controller.stop();
    mux.destroyAll();
    await closeServer(server);
  });
  return { controller, dead, events, port: serverPort(server) };
}

const frame = (values: number[], weight: number, dims = [values.length]) =>
  encodeRoundFrame({ roundKind: 0, weight, tensors: [tensorFromValues(0, dims, values)] }, mac);

async function relay(port: number, host: string, ranks: number[]): Promise<RawPeer> {
  const p = await RawPeer.connect(port);
  cleanups.push(() => p.destroy());
  p.write(
    encodeChannelMagic('data'),
    encodeMuxRecord({ kind: 'Control', msg: { type: 'Hello', host, ranks } }, mac),
  );
  return p;
}

async function expectAck(p: RawPeer) {
  const rec = decodeMuxRecord((await p.readMux())!, mac);
  expect(rec).toEqual({ kind: 'Control', msg: { type: 'HelloAck' } });
}

function sendHostFrame(p: RawPeer, payload: Uint8Array) {
  p.write(encodeMuxHeader(REC_HOST_FRAME, 0, payload, mac), payload);
}

async function readBroadcast(p: RawPeer) {
  const rec = decodeMuxRecord((await p.readMux())!, mac);
  expect(rec.kind).toBe('Broadcast');
  const f = decodeRoundFrame((rec as { payload: Uint8Array }).payload, mac);
  return { weight: f.weight, values: Array.from(tensorValues(f.tensors[0])) };
}

describe('controller (data channel) against fake relays', () => {
  it('averages two hosts by mass and scatters one Broadcast per host (5.4 #1, #29)', async () => {
    const { port } = await startController(3);
    const a = await relay(port, 'h0', [0, 1]);
    const b = await relay(port, 'h1', [2]);
    await expectAck(a);
    await expectAck(b);
    // Host A folded ranks 0 and 1 (pre-scaled sums), host B rank 2.
    sendHostFrame(a, frame([1 + 3, 2 + 4], 2));
    sendHostFrame(b, frame([2, 3], 1));
    for (const p of [a, b]) expect(await readBroadcast(p)).toEqual({ weight: 3, values: [2, 3] });
    // Round two goes on with the same connections.
    sendHostFrame(a, frame([10, 20], 2));
    sendHostFrame(b, frame([0, 0], 2));
    for (const p of [a, b]) expect(await readBroadcast(p)).toEqual({ weight: 4, values: [2.5, 5] });
  });

  it('drops a connection whose first record is not Hello (5.4 #3) and one with an out-of-range rank (#4)', async () => {
    const { port, events } = await startController(1);
    const p = await RawPeer.connect(port);
    cleanups.push(() => p.destroy());
    p.write(
      encodeChannelMagic('data'),
      encodeMuxRecord({ kind: 'Data', rank: 0, payload: new Uint8Array([1]) }, mac),
    );
    await p.closedByPeer();
    const q = await relay(port, 'hx', [5]);
    await q.closedByPeer();
    const errors = events.filter((e) => e.type === 'error').map((e) => (e as { message: string }).message);
    expect(errors[0]).toMatch(/first record must be Control\(Hello\)/);
    expect(errors[1]).toMatch(/rank 5 out of range/);
  });

  it('rejects a HostFrame whose inner RoundFrame is keyed with another salt (5.4 #12)', async () => {
    const { port, events, dead } = await startController(2);
    const a = await relay(port, 'h0', [0]);
    const b = await relay(port, 'h1', [1]);
    await expectAck(a);
    await expectAck(b);
    const rogue = encodeRoundFrame(
      { roundKind: 0, weight: 1, tensors: [tensorFromValues(0, [1], [7])] },
      nodeMac(saltFromHex('aa'.repeat(16))),
    );
    sendHostFrame(a, rogue);
    await a.closedByPeer();
    const err = events.find((e) => e.type === 'error') as { message: string; code: string };
    expect(err.code).toBe('HMAC_MISMATCH');
    expect(err.message).toMatch(/HMAC verification failed/);
    // Elastic: the host is lost, nothing of its frame is accepted; host h1 goes on alone.
    await expect.poll(() => dead.isDead(0)).toBe(true);
    sendHostFrame(b, frame([4], 2));
    expect(await readBroadcast(b)).toEqual({ weight: 2, values: [2] });
  });

  it('refuses per-rank Data on the data channel, naming the stale relay build (5.4 #28)', async () => {
    const { port, events } = await startController(1);
    const a = await relay(port, 'h0', [0]);
    await expectAck(a);
    a.write(encodeMuxRecord({ kind: 'Data', rank: 0, payload: frame([1], 1) }, mac));
    await a.closedByPeer();
    const err = events.find((e) => e.type === 'error') as { message: string };
    expect(err.message).toMatch(/HostFrame/);
  });

  it('a reduce error ends the reduce loudly: unknown dtype (5.4 #5) and a shape mismatch across hosts (#6)', async () => {
    for (const [second, pattern] of [
      [
        encodeRoundFrame(
          { roundKind: 0, weight: 1, tensors: [{ dtype: 7, dims: [2], data: new Uint8Array(8) }] },
          mac,
        ),
        /dtype.*7|7.*dtype/,
      ],
      [frame([1, 2, 3], 1), /shape/],
    ] as const) {
      const { port, events, controller } = await startController(2);
      const a = await relay(port, 'h0', [0]);
      const b = await relay(port, 'h1', [1]);
      await expectAck(a);
      await expectAck(b);
      sendHostFrame(a, frame([1, 2], 1));
      sendHostFrame(b, second);
      await controller.finished();
      const end = events.find((e) => e.type === 'shutdown') as { reason: string; error: boolean };
      expect(end.error).toBe(true);
      expect(end.reason).toMatch(pattern);
    }
  });

  it('rejects a hostile 0xFFFFFFFF length before allocating anything', async () => {
    const { port, events } = await startController(2);
    const a = await relay(port, 'h0', [0]);
    await expectAck(a);
    const header = encodeMuxHeader(REC_HOST_FRAME, 0, new Uint8Array(0), mac);
    new DataView(header.buffer).setUint32(13, 0xffffffff, true);
    const before = process.memoryUsage().arrayBuffers;
    a.write(header);
    await a.closedByPeer();
    const err = events.find((e) => e.type === 'error') as { code: string; message: string };
    expect(err.code).toBe('OVER_CEILING');
    expect(err.message).toMatch(/frame ceiling/);
    // Nothing near the claimed 4 GiB was reserved.
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(64 * 1024 * 1024);
  });

  it('elastic scatter: a broken connection has its ranks declared dead and the others get the consensus (5.4 #13)', async () => {
    const { port, dead } = await startController(3);
    const a = await relay(port, 'h0', [0]);
    const b = await relay(port, 'h1', [1, 2]);
    await expectAck(a);
    await expectAck(b);
    sendHostFrame(a, frame([0], 1));
    sendHostFrame(b, frame([3], 2));
    a.destroy();
    const got = await readBroadcast(b);
    // Either the frame of h0 was taken before its loss was seen, or not: the survivors always get a consensus.
    expect([
      JSON.stringify({ weight: 3, values: [1] }),
      JSON.stringify({ weight: 2, values: [1.5] }),
    ]).toContain(JSON.stringify(got));
    await expect.poll(() => dead.isDead(0)).toBe(true);
    expect(dead.isDead(1)).toBe(false);
  });

  it('strict policy: a relay lost with live ranks shuts the reduce down', async () => {
    const { port, events, controller } = await startController(2, 'strict');
    const a = await relay(port, 'h0', [0]);
    const b = await relay(port, 'h1', [1]);
    await expectAck(a);
    await expectAck(b);
    a.destroy();
    await controller.finished();
    const end = events.find((e) => e.type === 'shutdown') as { reason: string };
    expect(end.reason).toMatch(/strict/);
  });

  it('a peer stalled mid-frame: the committed reader waits, then the starvation deadline fires', async () => {
    const { port, events, dead } = await startController(2, 'elastic', { starvationMs: 300 });
    const a = await relay(port, 'h0', [0]);
    const b = await relay(port, 'h1', [1]);
    await expectAck(a);
    await expectAck(b);
    const payload = frame([1, 2, 3, 4], 1);
    a.write(encodeMuxHeader(REC_HOST_FRAME, 0, payload, mac), payload.subarray(0, 10));
    // While the frame is partial nothing is dropped or misread; then no progress -> STARVED.
    await a.closedByPeer();
    const err = events.find((e) => e.type === 'error') as { code: string; message: string };
    expect(err.code).toBe('STARVED');
    expect(err.message).toMatch(/starved mid-frame/);
    await expect.poll(() => dead.isDead(0)).toBe(true);
    sendHostFrame(b, frame([8], 2));
    expect(await readBroadcast(b)).toEqual({ weight: 2, values: [4] });
  });
});

describe('controller: the consensus memory', () => {
  // The reduce's f32 sums are kernel memory the Broadcast is a view of. Never given back, every
  // round took fresh memory (a new page-faulting module memory, or a run of receive-arena blocks
  // that no one returned) and left the relay's recycled sums nothing to reuse.
  const kernel = createWasmFoldKernel({ arenaBytes: 16 << 20 })!;
  useFoldKernel(kernel);

  it('goes back to the kernel once every Broadcast of it is sent: the arena in use stays flat over rounds', async () => {
    const arena = kernel.receiveArena!()!;
    const { port } = await startController(2);
    const a = await relay(port, 'h0', [0]);
    const b = await relay(port, 'h1', [1]);
    await expectAck(a);
    await expectAck(b);
    // 1 MiB of f32 sums: the reduce's accumulator is a run of arena blocks.
    const n = 256 * 1024;
    const inUse: number[] = [];
    for (let round = 0; round < 12; round++) {
      const values = Array.from({ length: n }, (_, i) => (i % 7) + round);
      sendHostFrame(a, frame(values, 1));
      sendHostFrame(b, frame(values, 1));
      for (const p of [a, b]) {
        const { weight, values: got } = await readBroadcast(p);
        expect(weight).toBe(2);
        expect(got[5]).toBe(5 + round);
      }
      inUse.push(arena.blocksInUse);
    }
    // One round's sums may still be on their way out; none accumulate.
    expect(Math.max(...inUse.slice(2))).toBeLessThanOrEqual(Math.max(...inUse.slice(0, 2)) + 1);
    expect(inUse[inUse.length - 1]).toBeLessThan(6);
  });

  it("takes the HostFrames' buffers from the pool and gives them back after the reduce: no fresh buffer after the first rounds", async () => {
    const { port } = await startController(2);
    const a = await relay(port, 'h0', [0]);
    const b = await relay(port, 'h1', [1]);
    await expectAck(a);
    await expectAck(b);
    const n = 256 * 1024;
    const fresh: number[] = [];
    for (let round = 0; round < 8; round++) {
      const values = Array.from({ length: n }, (_, i) => (i % 5) + round);
      sendHostFrame(a, frame(values, 1));
      sendHostFrame(b, frame(values, 1));
      for (const p of [a, b]) expect((await readBroadcast(p)).values[3]).toBe(3 + round);
      fresh.push(unitBuffers.stats.fresh);
    }
    // Each 1 MiB HostFrame spans many reads: it was joined into a pooled buffer, given back once reduced.
    expect(fresh[1]).toBeGreaterThan(0);
    expect(fresh[7]).toBe(fresh[1]);
  });
});
