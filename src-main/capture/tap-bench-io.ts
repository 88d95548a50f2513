// What the tap bench's figures are made of: a relay uplink's bytes (channel
// magic, Hello, model-sized HostFrames), a receiver that notes the instant
// they all arrived, and a timed send of them to a port.
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { encodeChannelMagic } from '@shared/wire/channel';
import { encodeMuxRecord } from '@shared/wire/mux';
import { encodeRoundFrame } from '@shared/wire/round-frame';
import { tensorFromValues } from '@shared/wire/tensor';
import type { Mac } from '@shared/wire/mac';

export async function server(onConn: (s: net.Socket) => void): Promise<net.Server> {
  const srv = net.createServer((s) => {
    s.setNoDelay(true);
    s.on('error', () => {});
    onConn(s);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return srv;
}
export const portOf = (s: net.Server) => (s.address() as net.AddressInfo).port;
export const close = (s: net.Server) => new Promise<void>((r) => s.close(() => r()));

/** Sends `chunks` to port; resolves with the ms until the receiver had them all, and that instant. */
export async function timedSend(port: number, chunks: Uint8Array[], received: () => Promise<number>) {
  const c = net.connect({ port, host: '127.0.0.1' });
  c.setNoDelay(true);
  await new Promise((r) => c.once('connect', r));
  const t0 = performance.now();
  const done = received();
  for (const ch of chunks) if (!c.write(ch)) await new Promise((r) => c.once('drain', r));
  const t1 = await done;
  c.destroy();
  return { ms: t1 - t0, at: t1 };
}

/** A relay's uplink as it starts: the channel magic, its Hello, then `frames` HostFrames of `frameBytes`. */
export function uplinkChunks(mac: Mac, frameBytes: number, frames: number): Uint8Array[] {
  const n = frameBytes / 4;
  const values = new Float32Array(n).map((_, i) => (i % 97) / 8);
  const payload = encodeRoundFrame(
    { roundKind: 0, weight: 1, tensors: [tensorFromValues(0, [n], values)] },
    mac,
  );
  const record = encodeMuxRecord({ kind: 'HostFrame', payload }, mac);
  const hello = encodeMuxRecord({ kind: 'Control', msg: { type: 'Hello', host: 'h0', ranks: [0] } }, mac);
  return [encodeChannelMagic('data'), hello, ...Array.from({ length: frames }, () => record)];
}

/** A sink whose `wait()` resolves, with the instant, when `total` bytes arrived on its current connection. */
export async function byteSink(total: number) {
  let arrived: ((t: number) => void) | null = null;
  const sink = await server((s) => {
    let got = 0;
    s.on('data', (b: Buffer) => {
      got += b.length;
      if (got >= total) arrived?.(performance.now());
    });
  });
  return { sink, wait: () => new Promise<number>((r) => (arrived = r)) };
}
