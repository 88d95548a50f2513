// The relay's roles over in-memory duplex pairs (no sockets): the same checks
// as relay.test.ts's real-socket ones where they are about logic, plus flodl's
// behaviours of issue 16: a rank closing mid-frame is that rank's death (the
// round ships with the others, the channel stays up), queued records drain
// before upstream closes after a MAC failure, and a rank's death decides its
// contribution at merge time.
import { afterEach, describe, expect, it } from 'vitest';
import { DTYPE_BF16, REC_BROADCAST } from '@shared/wire/constants';
import { encodeChannelMagic } from '@shared/wire/channel';
import {
  decodeControlAck,
  decodeDataAck,
  encodeControlHandshake,
  encodeDataHandshake,
} from '@shared/wire/handshake';
import { encodeLenFrame } from '@shared/wire/len-frame';
import { decodeMuxRecord, encodeMuxHeader, encodeMuxRecord, type MuxRecord } from '@shared/wire/mux';
import { decodeRoundFrame, encodeRoundFrame } from '@shared/wire/round-frame';
import { saltFromHex } from '@shared/wire/salt';
import { tensorFromValues, tensorValues } from '@shared/wire/tensor';
import { nodeMac } from '../crypto/node-mac';
import { Relay, type RelayEvent, type RelayOptions } from './relay';
import type { ChannelName } from './relay-options';
import { MemoryListener, memoryDuplexPair } from './testing/duplex-pair';
import { RawPeer } from './testing/peer';

const mac = nodeMac(saltFromHex('5a'.repeat(16)));
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Upstream {
  peer: RawPeer;
  magic: Uint8Array;
  hello: MuxRecord;
}

/** A relay whose ranks and controller are in-memory peers; the fake controller answers Hello with HelloAck. */
function memoryRelay(ranks: number[], worldSize: number, extra: Partial<RelayOptions> = {}) {
  const listeners = { data: new MemoryListener(), control: new MemoryListener() };
  const upstream = {} as Record<ChannelName, Promise<Upstream>>;
  const arrived = {} as Record<ChannelName, (u: Promise<Upstream>) => void>;
  for (const ch of ['data', 'control'] as const)
    upstream[ch] = new Promise<Promise<Upstream>>((r) => (arrived[ch] = r)).then((u) => u);
  const relay = Relay.over(
    {
      host: 0,
      hostName: 'h0',
      ranks,
      worldSize,
      mac,
      mode: 'fold',
      controllerAddress: 'memory',
      controllerPort: 0,
      dataVersion: 3,
      controlVersion: 2,
      ceiling: 1 << 20,
      dialUpstream: async (ch) => {
        const [mine, theirs] = memoryDuplexPair();
        const peer = RawPeer.wrap(theirs);
        cleanups.push(() => peer.destroy());
        arrived[ch](
          (async () => {
            const magic = (await peer.read(4))!;
            const hello = decodeMuxRecord((await peer.readMux())!, mac);
            peer.write(encodeMuxRecord({ kind: 'Control', msg: { type: 'HelloAck' } }, mac));
            return { peer, magic, hello };
          })(),
        );
        return mine;
      },
      ...extra,
    },
    listeners,
  );
  const events: RelayEvent[] = [];
  relay.on((e) => events.push(e));
  const started = relay.start();
  started.catch(() => {});
  cleanups.push(() => relay.close());
  return { relay, events, started, listeners, upstream };
}

async function dataRank(listener: MemoryListener, rank: number, worldSize: number) {
  const p = RawPeer.wrap(listener.connect());
  cleanups.push(() => p.destroy());
  p.write(encodeDataHandshake({ version: 3, rank, worldSize }));
  decodeDataAck((await p.read(8))!, { version: 3 });
  return p;
}

async function controlRank(listener: MemoryListener, rank: number, worldSize: number) {
  const p = RawPeer.wrap(listener.connect());
  cleanups.push(() => p.destroy());
  p.write(encodeControlHandshake({ version: 2, rank, worldSize }, mac));
  decodeControlAck((await p.read(16))!, mac, { version: 2 });
  return p;
}

/** A fold relay of `ranks` with every data rank handshaken, and its upstream peer. */
async function foldRelay(ranks: number[], extra: Partial<RelayOptions> = {}) {
  const r = memoryRelay(ranks, ranks.length, extra);
  const peers = [];
  for (const rank of ranks) peers.push(await dataRank(r.listeners.data, rank, ranks.length));
  const { peer } = await r.upstream.data;
  return { ...r, ranks: peers, peer };
}

const frame = (values: number[], weight: number, dtype = 0) =>
  encodeRoundFrame(
    { roundKind: 0, weight, tensors: [tensorFromValues(dtype, [values.length], values)] },
    mac,
  );
const next = async (p: RawPeer) => {
  const bytes = await p.readMux();
  return bytes && decodeMuxRecord(new Uint8Array(bytes), mac);
};
const hostFrame = async (p: RawPeer) => {
  const rec = await next(p);
  expect(rec?.kind).toBe('HostFrame');
  const f = decodeRoundFrame((rec as { payload: Uint8Array }).payload, mac);
  return { weight: f.weight, values: Array.from(tensorValues(f.tensors[0])) };
};
const rankExit = (rank: number) => ({ kind: 'Control', msg: { type: 'RankExit', rank } });
const turns = (n: number) => new Promise<void>((r) => setTimeout(r, n));

describe('relay roles over in-memory pairs', () => {
  it('control router: tags rank blobs upstream, routes replies by rank, RankExit on a leave', async () => {
    const { listeners, upstream } = memoryRelay([0, 1], 2);
    const r0 = await controlRank(listeners.control, 0, 2);
    const r1 = await controlRank(listeners.control, 1, 2);
    const { peer, magic, hello } = await upstream.control;
    expect(Buffer.from(magic)).toEqual(Buffer.from(encodeChannelMagic('control')));
    expect(hello).toEqual({ kind: 'Control', msg: { type: 'Hello', host: 'h0', ranks: [0, 1] } });
    r1.write(encodeLenFrame(new Uint8Array([1, 2, 3, 4])));
    expect(await next(peer)).toEqual({ kind: 'Data', rank: 1, payload: new Uint8Array([1, 2, 3, 4]) });
    peer.write(encodeMuxRecord({ kind: 'Data', rank: 0, payload: new Uint8Array([9, 8, 7]) }, mac));
    expect(Array.from((await r0.readLenFramed())!)).toEqual([9, 8, 7]);
    r0.end();
    expect(await next(peer)).toEqual(rankExit(0));
    r1.write(encodeLenFrame(new Uint8Array([5])));
    expect(await next(peer)).toEqual({ kind: 'Data', rank: 1, payload: new Uint8Array([5]) });
  });

  it('fold uplink: one HostFrame of the sums, the Broadcast fanned out verbatim', async () => {
    const { ranks, peer, events } = await foldRelay([0, 1]);
    ranks[0].write(encodeLenFrame(frame([1, 2], 3)));
    ranks[1].write(encodeLenFrame(frame([10, 20], 1)));
    expect(await hostFrame(peer)).toEqual({ weight: 4, values: [11, 22] });
    expect(events.find((e) => e.type === 'folded')).toMatchObject({ round: 0, depositors: [0, 1] });
    const consensus = frame([5], 2);
    peer.write(encodeMuxHeader(REC_BROADCAST, 0, consensus, mac), consensus);
    for (const r of ranks) expect(Buffer.from((await r.readLenFramed())!)).toEqual(Buffer.from(consensus));
  });

  it('a rank that sends the prefix 39 00 00 00, 20 bytes, then closes: dead, RankExit, the round ships with the others (issue 16 #2)', async () => {
    const { ranks, peer, events, relay } = await foldRelay([0, 1]);
    const partial = frame([1, 2, 3, 4, 5, 6, 7, 8, 9], 1, DTYPE_BF16);
    const blob = encodeLenFrame(partial);
    expect(Array.from(blob.subarray(0, 4))).toEqual([0x39, 0, 0, 0]);
    ranks[1].write(encodeLenFrame(frame([4, 8], 1.5)));
    ranks[0].write(blob.subarray(0, 4 + 20));
    await turns(20);
    ranks[0].end();
    // The round ships with rank 1 alone, then RankExit{0} (WIRE.md 4.4: HostFrame, then RankExit).
    expect(await hostFrame(peer)).toEqual({ weight: 1.5, values: [4, 8] });
    expect(await next(peer)).toEqual(rankExit(0));
    expect(events).toContainEqual({ type: 'rankDead', rank: 0, cause: 'error' });
    const err = events.find((e) => e.type === 'error') as { code: string; message: string; rank: number };
    expect(err).toMatchObject({ code: 'TRUNCATED', rank: 0 });
    expect(err.message).toMatch(/peer closed mid-frame/);
    // The host's data channel stays up: the consensus reaches rank 1 and the next round ships.
    const consensus = frame([4, 8], 1.5);
    peer.write(encodeMuxHeader(REC_BROADCAST, 0, consensus, mac), consensus);
    expect(Buffer.from((await ranks[1].readLenFramed())!)).toEqual(Buffer.from(consensus));
    ranks[1].write(encodeLenFrame(frame([2, 2], 1)));
    expect(await hostFrame(peer)).toEqual({ weight: 1, values: [2, 2] });
    expect(events.some((e) => e.type === 'shutdown')).toBe(false);
    expect(relay.waitingFor()).toEqual([]);
  });

  it('a rank starved mid-frame is that rank dead: RankExit, and the others go on', async () => {
    const { ranks, peer, events } = await foldRelay([0, 1], { starvationMs: 150 });
    const f = encodeLenFrame(frame([1, 2], 1));
    ranks[0].write(f.subarray(0, 10));
    ranks[1].write(encodeLenFrame(frame([3, 4], 1)));
    expect(await hostFrame(peer)).toEqual({ weight: 1, values: [3, 4] });
    expect(await next(peer)).toEqual(rankExit(0));
    expect(events.find((e) => e.type === 'error')).toMatchObject({ code: 'STARVED', rank: 0 });
  });

  it('after a local rank fails its MAC, the queued HostFrame still goes up before upstream closes (issue 16 #7)', async () => {
    const { ranks, peer, events } = await foldRelay([0, 1]);
    ranks[0].write(encodeLenFrame(frame([1, 1], 1)));
    await turns(20);
    const bad = frame([7, 7], 1);
    bad[bad.length - 12] ^= 0x01;
    // One chunk: rank 1's frame completes round 0 (its HostFrame is queued, encoded in slices),
    // then its next frame fails its MAC in the same turn.
    ranks[1].write(Buffer.concat([encodeLenFrame(frame([2, 3], 1)), encodeLenFrame(bad)]));
    expect(await hostFrame(peer)).toEqual({ weight: 2, values: [3, 4] });
    expect(await peer.readMux()).toBeNull();
    expect(events.find((e) => e.type === 'error')).toMatchObject({ code: 'HMAC_MISMATCH', rank: 1 });
    expect(events.find((e) => e.type === 'shutdown')).toMatchObject({
      reason: expect.stringMatching(/fold error/),
    });
  });

  // The staged FoldAccumulator (dropPending) keeps unverified bytes out of the sums.
  it('DeclareDead of a rank mid-frame: nothing of its frame reaches the sum (issue 16 #1)', async () => {
    // Rank 1 deposited [9, 9] @ 2; rank 0 is streaming [1, 5] @ 1 and only its first element is in.
    const { ranks, peer } = await foldRelay([0, 1]);
    ranks[1].write(encodeLenFrame(frame([9, 9], 2)));
    const f0 = encodeLenFrame(frame([1, 5], 1));
    const firstElementEnd = 4 + 17 + 2 + 4 + 8 + 4;
    ranks[0].write(f0.subarray(0, firstElementEnd));
    await turns(20);
    peer.write(encodeMuxRecord({ kind: 'Control', msg: { type: 'DeclareDead', rank: 0 } }, mac));
    expect(await hostFrame(peer)).toEqual({ weight: 2, values: [9, 9] });

    // The round not yet complete when the death comes: rank 0's frame, though it ends, adds nothing.
    const three = await foldRelay([0, 1, 2]);
    three.ranks[1].write(encodeLenFrame(frame([9, 9], 2)));
    three.ranks[0].write(f0.subarray(0, firstElementEnd));
    await turns(20);
    three.peer.write(encodeMuxRecord({ kind: 'Control', msg: { type: 'DeclareDead', rank: 0 } }, mac));
    await turns(20);
    three.ranks[0].write(f0.subarray(firstElementEnd));
    await turns(20);
    three.ranks[2].write(encodeLenFrame(frame([1, 1], 1)));
    expect(await hostFrame(three.peer)).toEqual({ weight: 3, values: [10, 10] });
    expect(three.events.find((e) => e.type === 'dropped')).toMatchObject({ rank: 0 });
  });
});
