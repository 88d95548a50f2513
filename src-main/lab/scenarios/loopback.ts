// A real TCP connection on loopback for the socket-level reproductions: the
// listening side's socket (`peer`) and the dialling side's (`client`).
import net from 'node:net';
import { closeServer, listen, serverPort } from '../../engine/conn';

export interface LoopbackPair {
  client: net.Socket;
  peer: net.Socket;
  port: number;
  close(): Promise<void>;
}

export async function loopbackPair(noDelay = true): Promise<LoopbackPair> {
  const server = await listen('127.0.0.1', 0);
  const port = serverPort(server);
  const accepted = new Promise<net.Socket>((resolve) => server.once('connection', resolve));
  const client = await new Promise<net.Socket>((resolve, reject) => {
    const s = net.connect({ host: '127.0.0.1', port, noDelay });
    s.once('connect', () => resolve(s));
    s.once('error', reject);
  });
  const peer = await accepted;
  peer.setNoDelay(noDelay);
  client.on('error', () => {});
  peer.on('error', () => {});
  return {
    client,
    peer,
    port,
    async close() {
      client.destroy();
      peer.destroy();
      await closeServer(server);
    },
  };
}

/** Resolves after `ms`. */
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export function median(xs: number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export const round1 = (x: number) => Math.round(x * 10) / 10;
