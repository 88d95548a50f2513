// The live tap against hostile and awkward traffic on real sockets: random
// bytes, a mux header declaring a 4 GiB payload, a wrong salt, a peer that
// stalls mid-frame, a reader that stops reading (backpressure), a reset.
// Every byte must reach the other side unchanged, every problem must be
// reported, and the tap must keep serving new connections.
import { afterEach, describe, expect, it } from 'vitest';
import net from 'node:net';
import { createHash, randomBytes } from 'node:crypto';
import { encodeChannelMagic } from '@shared/wire/channel';
import { encodeMuxRecord } from '@shared/wire/mux';
import { saltFromHex } from '@shared/wire/salt';
import { nodeMac } from '../crypto/node-mac';
import type { TraceLink } from '../lab/trace/format';
import type { DecodedUnit } from './stream-decoder';
import { TapProxy } from './tap-proxy';

const SALT = '00112233445566778899aabbccddeeff';
const mac = nodeMac(saltFromHex(SALT));

interface Upstream {
  server: net.Server;
  port: number;
  /** Bytes received per accepted connection, in order. */
  received: Buffer[][];
  sockets: net.Socket[];
}

async function upstream(opts: { paused?: boolean } = {}): Promise<Upstream> {
  const u: Upstream = { server: net.createServer(), port: 0, received: [], sockets: [] };
  u.server.on('connection', (s) => {
    const got: Buffer[] = [];
    u.received.push(got);
    u.sockets.push(s);
    s.on('error', () => {});
    if (opts.paused) s.pause();
    s.on('data', (b: Buffer) => got.push(b));
  });
  await new Promise<void>((r) => u.server.listen(0, '127.0.0.1', r));
  u.port = (u.server.address() as net.AddressInfo).port;
  return u;
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function startTap(up: Upstream, extra: Partial<Parameters<typeof TapProxy.start>[0]> = {}) {
  const units: { link: TraceLink; u: DecodedUnit }[] = [];
  const closes: { by: string; reset: boolean }[] = [];
  const tap = await TapProxy.start({
    listenPort: 0,
    upstreamHost: '127.0.0.1',
    upstreamPort: up.port,
    mac,
    name: 'h0.uplink',
    onUnit: (link, u) => units.push({ link, u }),
    onClose: (_l, by, reset) => closes.push({ by, reset }),
    ...extra,
  });
  cleanups.push(() => tap.close());
  cleanups.push(() => new Promise<void>((r) => up.server.close(() => r())));
  cleanups.push(() => up.sockets.forEach((s) => s.destroy()));
  return { tap, units, closes };
}

function connect(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => resolve(s));
    s.on('error', reject);
    cleanups.push(() => void s.destroy());
  });
}

const until = async (cond: () => boolean, what: string) => {
  for (let i = 0; i < 2000 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!cond()) throw new Error(`timed out waiting for ${what}`);
};
const hello = () =>
  encodeMuxRecord({ kind: 'Control', msg: { type: 'Hello', host: 'h0', ranks: [0, 1] } }, mac);
const sha = (bufs: Uint8Array[]) => createHash('sha256').update(Buffer.concat(bufs)).digest('hex');

describe('the live tap under hostile traffic', () => {
  it('forwards garbage, a 4 GiB length and a wrong salt unchanged, reports them, and stays up', async () => {
    const up = await upstream();
    const { tap, units } = await startTap(up);
    const c = await connect(tap.port);
    const garbage = randomBytes(3000);
    // A mux header whose payload_len is 0xffffffff (4 GiB - 1): over any ceiling.
    const huge = Buffer.from(hello());
    huge.writeUInt32LE(0xffffffff, 13);
    const wrongSalt = encodeMuxRecord(
      { kind: 'Control', msg: { type: 'RankExit', rank: 1 } },
      nodeMac(new Uint8Array(16).fill(7)),
    );
    const sent = [
      encodeChannelMagic('data'),
      hello(),
      huge.subarray(0, 25),
      garbage,
      hello(),
      wrongSalt,
      hello(),
    ];
    for (const b of sent) c.write(b);
    const total = sent.reduce((a, b) => a + b.length, 0);
    await until(() => (up.received[0] ?? []).reduce((a, b) => a + b.length, 0) >= total, 'forwarded bytes');
    expect(sha(up.received[0])).toBe(sha(sent));
    c.end();
    await until(() => units.some((x) => x.u.kind === 'RankExit'), 'decoded units');
    await until(() => units.filter((x) => x.u.kind === 'Hello').length === 3, 'the last Hello');
    const seen = units.map((x) => `${x.link.id} ${x.u.kind} ${x.u.verdict} ${x.u.code ?? ''}`.trim());
    expect(seen[0]).toBe('h0.uplink.data DATA magic ok');
    expect(seen[1]).toBe('h0.uplink.data Hello ok');
    // The 4 GiB header is rejected at its length (OVER_CEILING) and skipped with the garbage after it.
    const skipped = units.find((x) => x.u.kind === 'skipped')!;
    expect(skipped.u.code).toBe('OVER_CEILING');
    expect(skipped.u.length).toBe(25 + 3000);
    expect(seen.slice(3)).toEqual([
      'h0.uplink.data Hello ok',
      'h0.uplink.data RankExit undecodable HMAC_MISMATCH',
      'h0.uplink.data Hello ok',
    ]);
    // The tap still serves a new connection.
    const c2 = await connect(tap.port);
    c2.write(Buffer.concat([encodeChannelMagic('control'), hello()]));
    await until(
      () => units.some((x) => x.link.id === 'h0.uplink.control' && x.u.kind === 'Hello'),
      'second connection',
    );
  });

  it('reports a peer that stalls mid-frame, then the rest of the frame, and passes a close on', async () => {
    const up = await upstream();
    const { tap, units, closes } = await startTap(up, { stallMs: 150 });
    const c = await connect(tap.port);
    const frame = hello();
    c.write(Buffer.concat([encodeChannelMagic('data'), frame.subarray(0, 30)]));
    await until(() => units.some((x) => x.u.verdict === 'stalled'), 'stall report');
    const stall = units.find((x) => x.u.verdict === 'stalled')!;
    expect(stall.u.code).toBe('STARVED');
    expect(stall.u.message).toContain(`(30 of ${frame.length} bytes)`);
    c.write(frame.subarray(30));
    await until(() => units.some((x) => x.u.kind === 'Hello'), 'the completed Hello');
    expect(units.find((x) => x.u.kind === 'Hello')!.u.verdict).toBe('ok');
    // A frame cut by the close is reported TRUNCATED; the FIN reaches the upstream.
    c.end(frame.subarray(0, 10));
    await until(() => up.sockets[0]?.readableEnded === true, 'FIN upstream');
    await until(() => units.some((x) => x.u.code === 'TRUNCATED'), 'truncated report');
    await until(() => closes.length > 0, 'close report');
    expect(closes[0]).toEqual({ by: 'client', reset: false });
  });

  it('honours backpressure: a reader that stops reading stalls the writer, nothing is lost', async () => {
    const up = await upstream({ paused: true });
    const { tap } = await startTap(up);
    const c = await connect(tap.port);
    const payload = randomBytes(8 * 1024 * 1024);
    let writerBlocked = false;
    const done = new Promise<void>((resolve) => {
      let at = 0;
      const pump = () => {
        while (at < payload.length) {
          const ok = c.write(payload.subarray(at, at + 256 * 1024));
          at += 256 * 1024;
          if (!ok) {
            writerBlocked = true;
            c.once('drain', pump);
            return;
          }
        }
        resolve();
      };
      pump();
    });
    await until(() => writerBlocked, 'the writer to see backpressure');
    await until(() => up.sockets.length === 1, 'upstream connection');
    up.sockets[0].resume();
    await done;
    await until(() => up.received[0].reduce((a, b) => a + b.length, 0) === payload.length, 'every byte');
    expect(sha(up.received[0])).toBe(sha([payload]));
  });

  it('a reader that keeps stopping and starting: every pause resumes, nothing is lost (forwarding only and decoding)', async () => {
    // Many short stops make the tap's writes stop part-way with a few KiB left, less than a
    // stream's high-water mark: no drain event follows those, and the tap must still read on.
    for (const forwardOnly of [true, false]) {
      const up = await upstream({ paused: true });
      const { tap } = await startTap(up, { forwardOnly });
      const c = await connect(tap.port);
      await until(() => up.sockets.length === 1, 'upstream connection');
      const reader = up.sockets[0];
      // Stopped at first, so the kernel's buffers fill and the tap's writes have to wait.
      setTimeout(() => reader.resume(), 300);
      let sinceStop = 0;
      reader.on('data', (b: Buffer) => {
        sinceStop += b.length;
        if (sinceStop < 300 * 1024) return;
        sinceStop = 0;
        reader.pause();
        setTimeout(() => reader.resume(), 2);
      });
      // Small writes, so the tap's reads are small too (under the high-water mark).
      const payload = randomBytes(8 * 1024 * 1024);
      for (let at = 0; at < payload.length; at += 4096)
        if (!c.write(payload.subarray(at, at + 4096))) await new Promise((r) => c.once('drain', r));
      await until(() => up.received[0].reduce((a, b) => a + b.length, 0) === payload.length, 'every byte');
      expect(sha(up.received[0])).toBe(sha([payload]));
    }
  });

  it('a decoder that falls behind drops its backlog as a named gap and resynchronises; forwarding loses nothing', async () => {
    const up = await upstream();
    // A backlog bound far below what arrives in one burst.
    const { tap, units } = await startTap(up, { maxQueuedBytes: 4096 });
    const c = await connect(tap.port);
    const records = Array.from({ length: 400 }, (_, i) =>
      encodeMuxRecord({ kind: 'Control', msg: { type: 'RankExit', rank: i } }, mac),
    );
    const sent = [encodeChannelMagic('data'), hello(), ...records];
    c.write(Buffer.concat(sent));
    const total = sent.reduce((a, b) => a + b.length, 0);
    await until(() => (up.received[0] ?? []).reduce((a, b) => a + b.length, 0) >= total, 'forwarded bytes');
    expect(sha(up.received[0])).toBe(sha(sent));
    // Later bytes, once the backlog is gone, decode again.
    const late = encodeMuxRecord({ kind: 'Control', msg: { type: 'DeclareDead', rank: 9 } }, mac);
    await new Promise((r) => setTimeout(r, 200));
    c.write(late);
    await until(() => units.some((x) => x.u.kind === 'DeclareDead'), 'a unit after the gap');
    const gaps = units.filter((x) => x.u.verdict === 'gap');
    expect(gaps.length).toBeGreaterThan(0);
    expect(gaps[0].u.message).toBe('not decoded: the decoder fell behind');
    expect(units.find((x) => x.u.kind === 'DeclareDead')!.u.verdict).toBe('ok');
    const decodedBytes = units.reduce((a, x) => a + x.u.length, 0);
    // Every byte is either in a unit, in a gap or skipped: the accounting is whole.
    expect(decodedBytes).toBe(total + late.length);
  });

  it('passes a reset from the upstream to the client', async () => {
    const up = await upstream();
    const { tap, closes } = await startTap(up);
    const c = await connect(tap.port);
    const err = new Promise<NodeJS.ErrnoException>((r) => c.on('error', r));
    c.write(encodeChannelMagic('data'));
    await until(() => up.sockets.length === 1, 'upstream connection');
    up.sockets[0].resetAndDestroy();
    expect((await err).code).toBe('ECONNRESET');
    await until(() => closes.length > 0, 'close report');
    expect(closes[0]).toEqual({ by: 'server', reset: true });
  });
});
