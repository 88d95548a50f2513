// The floor of a small round: loopback messages between processes.
// A round of a tiny model moves almost no bytes, so what bounds it is how
// fast a message crosses from one process (or socket) to another and the
// receiver wakes up, and how much CPU each such message costs. Both are
// measured here as a ping-pong of 8-byte messages over loopback TCP
// (TCP_NODELAY) between two child Node processes, the way the engine and a
// rank talk: the round trip's time, and the CPU both processes spent per
// one-way message (process.cpuUsage on each side).
//
// A fold round's critical path crosses 7 such one-way hops: SyncNow from the
// coordinator to the relay and on to the rank, the deposit from the rank to
// the relay and on to the controller, the Broadcast back to the relay and on
// to the rank, and the rank's adoption report to the engine: 3.5 round trips.
// But every rank must take its own four (SyncNow in, its deposit out, the
// consensus in, its report out), and every host three inside the engine
// (SyncNow records, HostFrame, Broadcast): 4HK + 3H messages that share the
// machine's cores. The floor is the larger of the two (smallRoundFloor).
import type { spawn } from 'node:child_process';
import { spawnTied } from '../../shell-common/tied-spawn';
import readline from 'node:readline';
import { median } from './stages';

/** One-way hops between processes or sockets on a fold round's critical path (see above). */
export const SMALL_ROUND_HOPS = 7;

// Two children, so nothing else this process does is in the figures: an echo server on an
// ephemeral loopback port (printed), which prints its CPU time (us, user + system) when its stdin
// sends a line; and a pinger that runs the ping-pongs and prints its own figures as JSON.
const ECHO = `
const net = require('node:net');
const s = net.createServer({ noDelay: true }, (c) => { c.setNoDelay(true); c.on('data', (d) => c.write(d)); });
s.listen(0, '127.0.0.1', () => process.stdout.write(String(s.address().port) + '\\n'));
process.stdin.on('data', () => { const u = process.cpuUsage(); process.stdout.write(String(u.user + u.system) + '\\n'); });
process.stdin.on('end', () => process.exit(0));
`;
const PINGER = `
const net = require('node:net');
const [port, trips, warmup] = process.argv.slice(1).map(Number);
const sock = net.connect({ port, host: '127.0.0.1', noDelay: true }, async () => {
  const ping = Buffer.alloc(8, 1);
  const times = [];
  let cpu0 = process.cpuUsage();
  for (let i = 0; i < warmup + trips; i++) {
    if (i === warmup) {
      // Timed trips start once the parent has read the echo's CPU time ('go' on stdin).
      process.stdout.write('timing\\n');
      await new Promise((r) => process.stdin.once('data', r));
      cpu0 = process.cpuUsage();
    }
    const t0 = process.hrtime.bigint();
    await new Promise((resolve) => {
      let got = 0;
      const onData = (d) => { got += d.length; if (got < ping.length) return; sock.off('data', onData); resolve(); };
      sock.on('data', onData);
      sock.write(ping);
    });
    if (i >= warmup) times.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  const u = process.cpuUsage(cpu0);
  process.stdout.write(JSON.stringify({ times, cpuUs: u.user + u.system }) + '\\n');
  sock.destroy();
});
`;

export interface RoundTripBench {
  /** Ping-pongs timed (after a warm-up). */
  trips: number;
  medianUs: number;
  p90Us: number;
  /** CPU of both processes per one-way message over the timed trips (user + system). */
  cpuPerMessageUs: number;
}

/** Lines a child prints, one at a time (node:readline buffers the ones nobody has asked for yet). */
function lineReader(stream: NodeJS.ReadableStream): () => Promise<string> {
  const lines = readline.createInterface({ input: stream })[Symbol.asyncIterator]();
  return async () => {
    const next = await lines.next();
    if (next.done) throw new Error('the child closed its output early');
    return next.value.trim();
  };
}

/** Median and p90 of `trips` loopback round trips between two child processes, and the CPU per message. */
export async function benchLoopbackRoundTrip(trips = 2000): Promise<RoundTripBench> {
  const echo = spawnTied(process.execPath, ['-e', ECHO], { stdio: ['pipe', 'pipe', 'inherit'] });
  let pinger: ReturnType<typeof spawn> | null = null;
  try {
    const echoLine = lineReader(echo.stdout!);
    const exited = (name: string) =>
      new Promise<never>((_, reject) =>
        echo.once('exit', (code) => reject(new Error(`${name} exited (${code}) before it was done`))),
      );
    const port = Number(await Promise.race([echoLine(), exited('echo process')]));
    const echoCpuUs = async () => {
      echo.stdin!.write('cpu\n');
      return Number(await echoLine());
    };
    const warmup = Math.min(200, trips);
    pinger = spawnTied(process.execPath, ['-e', PINGER, String(port), String(trips), String(warmup)], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const pingLine = lineReader(pinger.stdout!);
    await pingLine(); // 'timing': the warm-up is over
    const echoCpu0 = await echoCpuUs();
    pinger.stdin!.write('go\n');
    const { times, cpuUs } = JSON.parse(await pingLine()) as { times: number[]; cpuUs: number };
    const echoCpu = (await echoCpuUs()) - echoCpu0;
    const sorted = [...times].sort((a, b) => a - b);
    return {
      trips,
      medianUs: median(times),
      p90Us: sorted[Math.floor(sorted.length * 0.9)],
      cpuPerMessageUs: (cpuUs + echoCpu) / (2 * trips),
    };
  } finally {
    pinger?.stdin?.end();
    pinger?.kill();
    echo.stdin!.end();
    echo.kill();
  }
}

export interface SmallRoundFloor {
  /** The critical path: SMALL_ROUND_HOPS one-way hops at half a round trip each. */
  criticalPathMs: number;
  /** Messages between processes and sockets a round needs: 4 per rank, 3 per host. */
  messages: number;
  /** Those messages' CPU at the measured cost per message, spread over the cores. */
  workMs: number;
  cores: number;
  floorMs: number;
  boundBy: 'criticalPath' | 'work';
  derivation: string;
}

/** A small fold round's floor on this machine: its critical path, or its messages' CPU over the cores. */
export function smallRoundFloor(
  hosts: number,
  ranksPerHost: number,
  rt: Pick<RoundTripBench, 'medianUs' | 'cpuPerMessageUs'>,
  cores: number,
): SmallRoundFloor {
  const criticalPathMs = ((SMALL_ROUND_HOPS / 2) * rt.medianUs) / 1000;
  const messages = 4 * hosts * ranksPerHost + 3 * hosts;
  const workMs = (messages * rt.cpuPerMessageUs) / 1000 / Math.max(1, cores);
  const floorMs = Math.max(criticalPathMs, workMs);
  const r = (x: number) => Math.round(x * 1000) / 1000;
  return {
    criticalPathMs,
    messages,
    workMs,
    cores,
    floorMs,
    boundBy: workMs > criticalPathMs ? 'work' : 'criticalPath',
    derivation:
      `critical path ${SMALL_ROUND_HOPS} hops x ${r(rt.medianUs / 2)} us = ${r(criticalPathMs)} ms; ` +
      `work (4 x ${hosts} x ${ranksPerHost} + 3 x ${hosts}) = ${messages} messages x ${r(rt.cpuPerMessageUs)} us CPU / ${cores} cores = ${r(workMs)} ms; ` +
      `floor = ${r(floorMs)} ms`,
  };
}
