// The floor of a small round: loopback round trips between two processes.
// A round of a tiny model moves almost no bytes, so what bounds it is how
// fast a message crosses from one process (or socket) to another and the
// receiver wakes up. Measured here as a ping-pong of 8-byte messages over
// loopback TCP (TCP_NODELAY) between this process and a child Node process,
// the way the engine and a rank talk.
//
// A fold round's critical path crosses 7 such one-way hops: SyncNow from the
// coordinator to the relay and on to the rank, the deposit from the rank to
// the relay and on to the controller, the Broadcast back to the relay and on
// to the rank, and the rank's adoption report to the engine. So its floor is
// 3.5 round trips (round.small.floorMs).
import { spawn } from 'node:child_process';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { median } from './stages';

/** One-way hops between processes or sockets on a fold round's critical path (see above). */
export const SMALL_ROUND_HOPS = 7;

// The child: an echo server on an ephemeral loopback port, which it prints.
const ECHO = `
const net = require('node:net');
const s = net.createServer({ noDelay: true }, (c) => { c.setNoDelay(true); c.on('data', (d) => c.write(d)); });
s.listen(0, '127.0.0.1', () => process.stdout.write(String(s.address().port) + '\\n'));
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
`;

export interface RoundTripBench {
  /** Ping-pongs timed (after a warm-up). */
  trips: number;
  medianUs: number;
  p90Us: number;
}

/** Median and p90 of `trips` loopback round trips to a child process, in microseconds. */
export async function benchLoopbackRoundTrip(trips = 2000): Promise<RoundTripBench> {
  const child = spawn(process.execPath, ['-e', ECHO], { stdio: ['pipe', 'pipe', 'inherit'] });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('\n')) resolve(Number(out.trim()));
      });
      child.once('exit', (code) => reject(new Error(`echo process exited (${code}) before listening`)));
    });
    const sock = net.connect({ port, host: '127.0.0.1', noDelay: true });
    await new Promise((r) => sock.once('connect', r));
    const ping = Buffer.alloc(8, 1);
    const times: number[] = [];
    const warmup = Math.min(200, trips);
    for (let i = 0; i < warmup + trips; i++) {
      const t0 = performance.now();
      await new Promise<void>((resolve) => {
        let got = 0;
        const onData = (d: Buffer) => {
          got += d.length;
          if (got < ping.length) return;
          sock.off('data', onData);
          resolve();
        };
        sock.on('data', onData);
        sock.write(ping);
      });
      if (i >= warmup) times.push((performance.now() - t0) * 1000);
    }
    sock.destroy();
    const sorted = [...times].sort((a, b) => a - b);
    return { trips, medianUs: median(times), p90Us: sorted[Math.floor(sorted.length * 0.9)] };
  } finally {
    child.stdin!.end();
    child.kill();
  }
}
