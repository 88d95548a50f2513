// A relay between fake ranks and a fake controller, all on real loopback
// sockets (WIRE.md 5.2): tagging and routing on the control channel, the fold
// on the data channel, deaths, DeclareDead, validation failures.
import type net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createWasmFoldKernel } from '@shared/fold/kernel-wasm';
import { useFoldKernel } from './testing/fold-kernel';
import { hostFoldReference } from '@shared/fold/testing/flodl-reference';
import { encodeChannelMagic } from '@shared/wire/channel';
import {
  encodeControlHandshake,
  encodeDataHandshake,
  decodeDataAck,
  decodeControlAck,
} from '@shared/wire/handshake';
import { encodeLenFrame } from '@shared/wire/len-frame';
import { decodeMuxRecord, encodeMuxHeader, encodeMuxRecord, type MuxRecord } from '@shared/wire/mux';
import { REC_BROADCAST } from '@shared/wire/constants';
import { decodeRoundFrame, encodeRoundFrame } from '@shared/wire/round-frame';
import { saltFromHex } from '@shared/wire/salt';
import { elidedTensor, tensorFromValues, tensorValues } from '@shared/wire/tensor';
import { nodeMac } from '../crypto/node-mac';
import { closeServer, listen, serverPort } from './conn';
import { Relay, type RelayEvent } from './relay';
import { RawPeer } from './testing/peer';

const SALT = saltFromHex('112233445566778899aabbccddeeff01');
const mac = nodeMac(SALT);
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A fake controller: accepts one connection per channel, answers Hello with HelloAck. */
async function fakeController() {
  const server = await listen();
  const peers: Promise<{ peer: RawPeer; magic: Uint8Array; hello: MuxRecord }>[] = [];
  const waiting: ((p: RawPeer) => void)[] = [];
  const sockets: net.Socket[] = [];
  server.on('connection', (s) => {
    sockets.push(s);
    const peer = RawPeer.wrap(s);
    waiting.shift()?.(peer);
  });
  const next = () => {
    const p = new Promise<RawPeer>((r) => waiting.push(r)).then(async (peer) => {
      const magic = (await peer.read(4))!;
      const hello = decodeMuxRecord((await peer.readMux())!, mac);
      peer.write(encodeMuxRecord({ kind: 'Control', msg: { type: 'HelloAck' } }, mac));
      return { peer, magic, hello };
    });
    peers.push(p);
    return p;
  };
  cleanups.push(async () => {
    for (const s of sockets) s.destroy();
    await closeServer(server);
  });
  return { port: serverPort(server), next };
}

async function startRelay(
  ranks: number[],
  worldSize: number,
  port: number,
  extra: Partial<Parameters<typeof Relay.listen>[0]> = {},
) {
  const relay = await Relay.listen({
    host: 0,
    hostName: 'h0',
    ranks,
    worldSize,
    mac,
    mode: 'fold',
    controllerAddress: '127.0.0.1',
    controllerPort: port,
    dataVersion: 3,
    controlVersion: 2,
    ceiling: 64 * 1024 * 1024,
    connectIntervalMs: 50,
    ...extra,
  });
  const events: RelayEvent[] = [];
  relay.on((e) => events.push(e));
  const started = relay.start();
  started.catch(() => {});
  cleanups.push(() => relay.close());
  return { relay, events, started };
}

async function dataRank(relay: Relay, rank: number, worldSize: number) {
  const p = await RawPeer.connect(relay.dataPort);
  cleanups.push(() => p.destroy());
  p.write(encodeDataHandshake({ version: 3, rank, worldSize }));
  decodeDataAck((await p.read(8))!, { version: 3 });
  return p;
}

/** A fold relay of ranks 0 and 1 (world 2), both ranks handshaken, and its upstream peer. */
async function twoRankFoldRelay() {
  const ctl = await fakeController();
  const { relay, events } = await startRelay([0, 1], 2, ctl.port);
  const up = ctl.next();
  const r0 = await dataRank(relay, 0, 2);
  const r1 = await dataRank(relay, 1, 2);
  const { peer } = await up;
  return { relay, events, r0, r1, peer };
}

async function controlRank(relay: Relay, rank: number, worldSize: number) {
  const p = await RawPeer.connect(relay.controlPort);
  cleanups.push(() => p.destroy());
  p.write(encodeControlHandshake({ version: 2, rank, worldSize }, mac));
  decodeControlAck((await p.read(16))!, mac, { version: 2 });
  return p;
}

const frame = (values: number[], weight: number, dtype = 0) =>
  encodeRoundFrame(
    { roundKind: 0, weight, tensors: [tensorFromValues(dtype, [values.length], values)] },
    mac,
  );
const values = (payload: Uint8Array) => {
  const f = decodeRoundFrame(payload, mac);
  return { weight: f.weight, values: Array.from(tensorValues(f.tensors[0])) };
};
const next = async (p: RawPeer) => {
  const rec = decodeMuxRecord(new Uint8Array((await p.readMux())!), mac);
  return 'payload' in rec ? { ...rec, payload: new Uint8Array(rec.payload) } : rec;
};

describe('relay control channel (byte router)', () => {
  it('tags rank blobs upstream, routes replies by rank, and reports RankExit (5.2 #1-#5)', async () => {
    const ctl = await fakeController();
    const { relay } = await startRelay([0, 1], 2, ctl.port);
    const up = ctl.next();
    const r0 = await controlRank(relay, 0, 2);
    const r1 = await controlRank(relay, 1, 2);
    const { peer, magic, hello } = await up;
    expect(Buffer.from(magic)).toEqual(Buffer.from(encodeChannelMagic('control')));
    expect(hello).toEqual({ kind: 'Control', msg: { type: 'Hello', host: 'h0', ranks: [0, 1] } });
    r1.write(encodeLenFrame(new Uint8Array([1, 2, 3, 4])));
    expect(await next(peer)).toEqual({ kind: 'Data', rank: 1, payload: new Uint8Array([1, 2, 3, 4]) });
    peer.write(encodeMuxRecord({ kind: 'Data', rank: 0, payload: new Uint8Array([9, 8, 7]) }, mac));
    expect(Array.from((await r0.readLenFramed())!)).toEqual([9, 8, 7]);
    r0.destroy();
    expect(await next(peer)).toEqual({ kind: 'Control', msg: { type: 'RankExit', rank: 0 } });
    // No barrier on the control channel: rank 1 still flows.
    r1.write(encodeLenFrame(new Uint8Array([5])));
    expect(await next(peer)).toEqual({ kind: 'Data', rank: 1, payload: new Uint8Array([5]) });
  });

  it('shuts down on upstream EOF although the rank is alive (5.2 #6)', async () => {
    const ctl = await fakeController();
    const { relay } = await startRelay([0], 1, ctl.port);
    const up = ctl.next();
    const r0 = await controlRank(relay, 0, 1);
    (await up).peer.destroy();
    await r0.closedByPeer();
  });

  it('rejects a control handshake under another salt before dialing upstream (5.6 #2)', async () => {
    const { relay, started } = await startRelay([0], 1, 1);
    const p = await RawPeer.connect(relay.controlPort);
    cleanups.push(() => p.destroy());
    p.write(
      encodeControlHandshake({ version: 2, rank: 0, worldSize: 1 }, nodeMac(saltFromHex('aa'.repeat(16)))),
    );
    await expect(started).rejects.toThrow(/HMAC verification failed/);
  });
});

describe('relay data channel (first fold tier)', () => {
  it('a single rank folds to the identity and the Broadcast reaches it verbatim (5.2 #7)', async () => {
    const ctl = await fakeController();
    const { relay } = await startRelay([0], 1, ctl.port);
    const up = ctl.next();
    const r0 = await dataRank(relay, 0, 1);
    const { peer, magic } = await up;
    expect(Buffer.from(magic)).toEqual(Buffer.from(encodeChannelMagic('data')));
    const sent = frame([1.5, 2.5], 2);
    r0.write(encodeLenFrame(sent));
    const rec = await next(peer);
    expect(rec.kind).toBe('HostFrame');
    // Same salt, same single deposit: byte-identical to what the rank sent.
    expect(Buffer.from((rec as { payload: Uint8Array }).payload)).toEqual(Buffer.from(sent));
    const consensus = frame([7, 8], 1);
    peer.write(encodeMuxHeader(REC_BROADCAST, 0, consensus, mac), consensus);
    expect(Buffer.from((await r0.readLenFramed())!)).toEqual(Buffer.from(consensus));
  });

  it('sums local ranks into exactly one HostFrame and fans the Broadcast out (5.2 #8, #9)', async () => {
    const { events, r0, r1, peer } = await twoRankFoldRelay();
    r0.write(encodeLenFrame(frame([1, 2], 3)));
    r1.write(encodeLenFrame(frame([10, 20], 1)));
    const rec = await next(peer);
    expect(values((rec as { payload: Uint8Array }).payload)).toEqual({ weight: 4, values: [11, 22] });
    expect(events.find((e) => e.type === 'folded')).toMatchObject({ round: 0, depositors: [0, 1] });
    const consensus = frame([5], 2);
    peer.write(encodeMuxHeader(REC_BROADCAST, 0, consensus, mac), consensus);
    for (const r of [r0, r1]) expect(values((await r.readLenFramed())!)).toEqual({ weight: 2, values: [5] });
  });

  it('a rank leaving folds the remainder, then RankExit goes up (5.2 #10)', async () => {
    const { r0, r1, peer } = await twoRankFoldRelay();
    r1.write(encodeLenFrame(frame([4], 1.5)));
    // Let rank 1's deposit land before rank 0 leaves.
    await new Promise((r) => setTimeout(r, 50));
    r0.destroy();
    const first = await next(peer);
    expect(values((first as { payload: Uint8Array }).payload)).toEqual({ weight: 1.5, values: [4] });
    expect(await next(peer)).toEqual({ kind: 'Control', msg: { type: 'RankExit', rank: 0 } });
  });

  it('a rank closing mid-frame (39 00 00 00, 20 bytes) is that rank dead; the round ships, the channel stays up (issue 16 #2)', async () => {
    const { events, r0, r1, peer } = await twoRankFoldRelay();
    const blob = encodeLenFrame(frame([1, 2, 3, 4, 5, 6, 7, 8, 9], 1, 1));
    expect(Array.from(blob.subarray(0, 4))).toEqual([0x39, 0, 0, 0]);
    r1.write(encodeLenFrame(frame([4], 1.5)));
    r0.write(blob.subarray(0, 24));
    await new Promise((r) => setTimeout(r, 50));
    r0.end();
    expect(values(((await next(peer)) as { payload: Uint8Array }).payload)).toEqual({
      weight: 1.5,
      values: [4],
    });
    expect(await next(peer)).toEqual({ kind: 'Control', msg: { type: 'RankExit', rank: 0 } });
    expect(events).toContainEqual({ type: 'rankDead', rank: 0, cause: 'error' });
    r1.write(encodeLenFrame(frame([6], 1)));
    expect(values(((await next(peer)) as { payload: Uint8Array }).payload)).toEqual({
      weight: 1,
      values: [6],
    });
  });

  it('DeclareDead from upstream unblocks the barrier (5.2 #11)', async () => {
    const { relay, r1, peer } = await twoRankFoldRelay();
    r1.write(encodeLenFrame(frame([9], 2)));
    await new Promise((r) => setTimeout(r, 50));
    expect(relay.waitingFor()).toEqual([0]);
    peer.write(encodeMuxRecord({ kind: 'Control', msg: { type: 'DeclareDead', rank: 0 } }, mac));
    expect(values(((await next(peer)) as { payload: Uint8Array }).payload)).toEqual({
      weight: 2,
      values: [9],
    });
  });

  it('an all-elided round ships elided; elided and full deposits merge (5.2 #13, #14)', async () => {
    const { r0, r1, peer } = await twoRankFoldRelay();
    const elided = encodeRoundFrame({ roundKind: 0, weight: 0, tensors: [elidedTensor(0, [3])] }, mac);
    r0.write(encodeLenFrame(elided));
    r1.write(encodeLenFrame(elided));
    const f = decodeRoundFrame(((await next(peer)) as { payload: Uint8Array }).payload, mac);
    expect(f.tensors[0].data).toBeNull();
    const consensus = frame([0, 0, 0], 0);
    peer.write(encodeMuxHeader(REC_BROADCAST, 0, consensus, mac), consensus);
    await r0.readLenFramed();
    await r1.readLenFramed();
    r0.write(encodeLenFrame(elided));
    r1.write(encodeLenFrame(frame([1, -2, 8], 3)));
    expect(values(((await next(peer)) as { payload: Uint8Array }).payload)).toEqual({
      weight: 3,
      values: [1, -2, 8],
    });
  });

  it('rejects a dtype mix loudly and ships nothing (5.2 #15)', async () => {
    const { events, r0, r1, peer } = await twoRankFoldRelay();
    r0.write(encodeLenFrame(frame([1, 2], 1, 0)));
    r1.write(encodeLenFrame(frame([1, 2], 1, 1)));
    expect(await peer.readMux()).toBeNull();
    const err = events.find((e) => e.type === 'error') as { message: string };
    expect(err.message).toMatch(/dtype/);
    expect(err.message).toMatch(/bf16_wire/);
  });

  it('rejects a double deposit in one round (5.2 #16)', async () => {
    const { events, r0, peer } = await twoRankFoldRelay();
    r0.write(encodeLenFrame(frame([1], 1)), encodeLenFrame(frame([1], 1)));
    expect(await peer.readMux()).toBeNull();
    expect((events.find((e) => e.type === 'error') as { message: string }).message).toMatch(
      /deposited twice/,
    );
  });

  it('a tampered rank frame fails its HMAC by name and nothing is sent upstream', async () => {
    const ctl = await fakeController();
    const { relay, events } = await startRelay([0], 1, ctl.port);
    const up = ctl.next();
    const r0 = await dataRank(relay, 0, 1);
    const { peer } = await up;
    const bad = frame([1, 2, 3], 1);
    bad[bad.length - 12] ^= 0x01;
    r0.write(encodeLenFrame(bad));
    expect(await peer.readMux()).toBeNull();
    const err = events.find((e) => e.type === 'error') as { code: string; message: string };
    expect(err.code).toBe('HMAC_MISMATCH');
  });

  // A length over the ceiling is a read error (flodl's try_read_len_framed): that rank's death, RankExit
  // goes up; prefix/body drift is caught by the frame's parse: a fold error, the channel shuts down.
  it('rejects a hostile 0xFFFFFFFF len prefix before allocating, and prefix/body drift both ways (5.5 #14)', async () => {
    for (const [prefixDelta, pattern] of [
      [null, /frame ceiling/],
      [-10, /length prefix/],
    ] as const) {
      const ctl = await fakeController();
      const { relay, events } = await startRelay([0], 1, ctl.port);
      const up = ctl.next();
      const r0 = await dataRank(relay, 0, 1);
      const { peer } = await up;
      const body = frame([1, 2, 3], 1);
      const prefix = new Uint8Array(4);
      new DataView(prefix.buffer).setUint32(
        0,
        prefixDelta === null ? 0xffffffff : body.length + prefixDelta,
        true,
      );
      r0.write(prefix, body);
      if (prefixDelta === null)
        expect(await next(peer)).toEqual({ kind: 'Control', msg: { type: 'RankExit', rank: 0 } });
      expect(await peer.readMux()).toBeNull();
      expect((events.find((e) => e.type === 'error') as { message: string }).message).toMatch(pattern);
    }
  });

  // Issue 16 item 6: flodl ignores bytes after a RoundFrame's footer inside the blob, so a prefix that
  // counts 10 bytes more than the frame (and 10 more bytes sent) still folds and ships.
  it('folds a blob whose prefix counts bytes after the footer, ignoring them as flodl does', async () => {
    const ctl = await fakeController();
    const { relay } = await startRelay([0], 1, ctl.port);
    const up = ctl.next();
    const r0 = await dataRank(relay, 0, 1);
    const { peer } = await up;
    const body = frame([1, 2, 3], 1);
    const prefix = new Uint8Array(4);
    new DataView(prefix.buffer).setUint32(0, body.length + 10, true);
    r0.write(prefix, body, new Uint8Array(10));
    expect(await next(peer)).toMatchObject({ kind: 'HostFrame' });
  });

  it('rejects a rank announcing another world size (5.5 #3) and an unknown rank', async () => {
    const a = await startRelay([0, 1], 2, 1);
    const p = await RawPeer.connect(a.relay.dataPort);
    cleanups.push(() => p.destroy());
    p.write(encodeDataHandshake({ version: 3, rank: 0, worldSize: 3 }));
    await expect(a.started).rejects.toThrow(/world_size 3, expected 2/);
    const b = await startRelay([0, 1], 2, 1);
    const q = await RawPeer.connect(b.relay.dataPort);
    cleanups.push(() => q.destroy());
    q.write(encodeDataHandshake({ version: 3, rank: 5, worldSize: 2 }));
    await expect(b.started).rejects.toThrow(/not one of host h0's ranks/);
  });
});

describe('relay data channel reading into the receive arena (WebAssembly kernel)', () => {
  const kernel = createWasmFoldKernel({ arenaBytes: 24 << 20 })!;
  useFoldKernel(kernel);

  it('sums model-sized deposits read in place, as flodl does byte for byte, round after round', async () => {
    const arena = kernel.receiveArena!()!;
    let retained = 0;
    const retain = arena.retain.bind(arena);
    arena.retain = (v) => {
      const held = retain(v);
      if (held) retained++;
      return held;
    };
    const { events, r0, r1, peer } = await twoRankFoldRelay();
    const n = 700_001; // 2.8 MiB per deposit: several blocks, an element split at most block edges
    for (let round = 0; round < 3; round++) {
      const frames = [0, 1].map((r) => ({
        roundKind: 0,
        weight: r + 1,
        tensors: [
          tensorFromValues(
            0,
            [n],
            Array.from({ length: n }, (_, i) => Math.sin(i * (r + 1) + round) * 10 ** ((i % 7) - 3)),
          ),
        ],
      }));
      r0.write(encodeLenFrame(encodeRoundFrame(frames[0], mac)));
      r1.write(encodeLenFrame(encodeRoundFrame(frames[1], mac)));
      const rec = (await next(peer)) as { kind: string; payload: Uint8Array };
      expect(rec.kind).toBe('HostFrame');
      const folded = events.filter((e) => e.type === 'folded')[round] as { order: number[] };
      const want = encodeRoundFrame(hostFoldReference(folded.order.map((r) => frames[r])), mac);
      expect(Buffer.from(rec.payload).equals(Buffer.from(want))).toBe(true);
      const consensus = frame([round], 1);
      peer.write(encodeMuxHeader(REC_BROADCAST, 0, consensus, mac), consensus);
      for (const r of [r0, r1]) await r.readLenFramed();
    }
    expect(retained).toBeGreaterThan(0);
  });
});
