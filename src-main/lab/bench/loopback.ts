// Raw loopback TCP, the machine's socket limit in a round's floor: bytes from
// this process to a child Node process, as between the engine and a rank. The
// child reads into one reused 1 MiB buffer (net.connect's onread), the way the
// lab's own sockets read now; best of three transfers. Measured inside one
// process with Node's default 64 KiB reads instead, both ends shared a thread
// and the rate came out at about half of what two processes move (0.8 to
// 1.6 GB/s against 1.7 to 3.3), which set the floor above rounds the lab ran.
import { spawnTied } from '../../shell-common/tied-spawn';
import type net from 'node:net';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { closeServer, listen, serverPort } from '../../engine/conn';

const MiB = 1024 * 1024;

// The child: connects, counts bytes into a reused buffer, says "done" once it has them all.
const RECEIVER = `
const net = require('node:net');
const [port, total] = process.argv.slice(1).map(Number);
let n = 0;
const buffer = Buffer.allocUnsafe(1 << 20);
net.connect({ port, host: '127.0.0.1', onread: { buffer, callback: (k) => {
  n += k;
  if (n >= total) process.stdout.write('done\\n', () => process.exit(0));
  return true;
} } });
`;

async function oneTransfer(buf: Buffer): Promise<number> {
  const server = await listen();
  const env = { ...process.env };
  delete env.NODE_EXTRA_CA_CERTS;
  const child = spawnTied(
    process.execPath,
    ['-e', RECEIVER, String(serverPort(server)), String(buf.length)],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
      env,
    },
  );
  try {
    const done = new Promise<number>((resolve, reject) => {
      child.stdout!.on('data', (d: Buffer) => {
        if (d.toString().includes('done')) resolve(performance.now());
      });
      child.once('exit', (code) =>
        reject(new Error(`loopback receiver exited (${code}) before all bytes came`)),
      );
    });
    const socket = await new Promise<net.Socket>((r) => server.once('connection', r));
    socket.setNoDelay(true);
    const t0 = performance.now();
    socket.write(buf);
    const t1 = await done;
    socket.destroy();
    return t1 - t0;
  } finally {
    child.kill();
    await closeServer(server);
  }
}

/** How fast this machine moves bytes through one loopback socket between two processes (best of 3). */
export async function benchLoopback(bytes: number) {
  const buf = randomBytes(bytes);
  let ms = Infinity;
  for (let i = 0; i < 3; i++) ms = Math.min(ms, await oneTransfer(buf));
  return { bytes, ms, mibPerSec: bytes / MiB / (ms / 1000), between: 'two processes' as const };
}
