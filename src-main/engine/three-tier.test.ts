// Rank <-> relay <-> controller (WIRE.md 5.5), with the two upper tiers real
// and the ranks played by raw sockets holding known values: averages, rounds
// in sequence, broadcast-from-root, bf16 weighted averages, an idle rank.
import { afterEach, describe, expect, it } from 'vitest';
import { encodeDataHandshake, decodeDataAck } from '@shared/wire/handshake';
import { encodeLenFrame } from '@shared/wire/len-frame';
import { decodeRoundFrame, encodeRoundFrame, type RoundFrame } from '@shared/wire/round-frame';
import { saltFromHex } from '@shared/wire/salt';
import { elidedTensor, tensorFromValues, tensorValues } from '@shared/wire/tensor';
import { nodeMac } from '../crypto/node-mac';
import { closeServer, listen, serverPort } from './conn';
import { Controller } from './controller';
import { DeadRanks } from './dead-ranks';
import { PortMux } from './port-mux';
import { Relay } from './relay';
import { RawPeer } from './testing/peer';

const mac = nodeMac(saltFromHex('42'.repeat(16)));
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A controller and one relay per host; returns a data socket per rank, handshaken. */
async function tiers(hosts: number[][]) {
  const world = hosts.flat().length;
  const controller = new Controller({
    worldSize: world,
    mac,
    mode: 'fold',
    policy: 'elastic',
    ceiling: 64 << 20,
    dataVersion: 3,
    dead: new DeadRanks(world),
  });
  const server = await listen();
  const mux = new PortMux(server, { handlers: { data: (c, h) => controller.attach(c, h) } });
  cleanups.push(async () => {
    await controller.stop();
    mux.destroyAll();
    await closeServer(server);
  });
  const ranks: RawPeer[] = [];
  for (let h = 0; h < hosts.length; h++) {
    const relay = await Relay.listen({
      host: h,
      hostName: `h${h}`,
      ranks: hosts[h],
      worldSize: world,
      mac,
      mode: 'fold',
      controllerAddress: '127.0.0.1',
      controllerPort: serverPort(server),
      dataVersion: 3,
      controlVersion: 2,
      ceiling: 64 << 20,
      connectIntervalMs: 20,
    });
    relay.start().catch(() => {});
    cleanups.push(() => relay.close());
    for (const r of hosts[h]) {
      const p = await RawPeer.connect(relay.dataPort);
      cleanups.push(() => p.destroy());
      p.write(encodeDataHandshake({ version: 3, rank: r, worldSize: world }));
      decodeDataAck((await p.read(8))!, { version: 3 });
      ranks[r] = p;
    }
  }
  /** One round: every rank sends its frame, every rank reads the consensus. */
  const round = async (frames: RoundFrame[]) => {
    frames.forEach((f, r) => ranks[r].write(encodeLenFrame(encodeRoundFrame(f, mac))));
    return Promise.all(ranks.map(async (p) => decodeRoundFrame((await p.readLenFramed())!, mac)));
  };
  return { round };
}

const model = (values: number[], weight: number, dtype = 0): RoundFrame => ({
  roundKind: 0,
  weight,
  tensors: [tensorFromValues(dtype, [values.length], values)],
});
const vals = (f: RoundFrame, i = 0) => Array.from(tensorValues(f.tensors[i]));

describe('three tiers with known values (5.5)', () => {
  it('two ranks average (#1) and keep averaging round after round (#2)', async () => {
    const { round } = await tiers([[0], [1]]);
    for (const f of await round([model([2, 4, 6], 1), model([4, 8, 12], 1)]))
      expect(vals(f)).toEqual([3, 6, 9]);
    for (const [a, b, want] of [
      [1, 3, 2],
      [5, 7, 6],
      [9, 11, 10],
    ]) {
      for (const f of await round([model([a], 1), model([b], 1)])) expect(vals(f)).toEqual([want]);
    }
  });

  it('broadcast from root: a Control round where the others send elided frames delivers the root values byte-exact (#6, #7)', async () => {
    const { round } = await tiers([[0, 1], [2]]);
    const root: RoundFrame = {
      roundKind: 1,
      weight: 0,
      tensors: [tensorFromValues(0, [3], [0.1, -7.25, 3e-8]), tensorFromValues(0, [2, 2], [1, 2, 3, 4])],
    };
    const other: RoundFrame = {
      roundKind: 1,
      weight: 0,
      tensors: [elidedTensor(0, [3]), elidedTensor(0, [2, 2])],
    };
    for (const f of await round([root, other, other])) {
      expect(Buffer.from(f.tensors[0].data!).equals(Buffer.from(root.tensors[0].data!))).toBe(true);
      expect(vals(f, 1)).toEqual([1, 2, 3, 4]);
    }
  });

  it('bf16 wire: (3*[2,8] + 1*[4,16]) / 4 = [2.5, 10] with mass 4 (#11)', async () => {
    const { round } = await tiers([[0, 1]]);
    for (const f of await round([model([6, 24], 3, 1), model([4, 16], 1, 1)])) {
      expect(f.weight).toBe(4);
      expect(vals(f)).toEqual([2.5, 10]);
    }
  });

  it('an idle rank ships elided and cannot poison the consensus (#12)', async () => {
    const { round } = await tiers([[0], [1, 2]]);
    const idle: RoundFrame = { roundKind: 0, weight: 0, tensors: [elidedTensor(0, [2])] };
    for (const f of await round([model([2, 8], 1), model([4, 16], 2), idle])) {
      expect(f.weight).toBe(3);
      // Pre-scaled sums (2+4, 8+16) over mass 3.
      expect(vals(f)).toEqual([2, 8]);
    }
  });
});
