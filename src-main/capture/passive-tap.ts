// The passive tap: no hop. It watches the connections to one server port on
// loopback through the kernel's packet capture (tcpdump on `lo`, a 256 MiB
// ring) and decodes them as the forwarding tap does, from the same
// TappedConnection. Nothing it does is in the path of the bytes: the peers
// talk straight to each other, the kernel copies each packet into the ring,
// and tcpdump, held unless loopback has gone quiet (capture-pacer.ts), reads
// the ring after the burst. A forwarding hop cost an 8 MiB record 1.7-2.3x its direct
// time on this machine; the kernel's copy alone costs 1.16-1.21x.
//
// Needs tcpdump and the right to capture (root or CAP_NET_RAW). What the
// capture missed (a ring that overflowed, a connection joined mid-way) is a
// named gap in the stream, never a shorter one.
import fs from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import type { TraceLink } from '../lab/trace/format';
import { spawnTied } from '../shell-common/tied-spawn';
import { droppedByKernel, loopbackCaptureArgs, untilCapturing } from './loopback-capture';
import { segmentOf } from './capture-file';
import { CapturePacer } from './capture-pacer';
import { LiveTcpStreams } from './live-reassembly';
import { PcapStreamReader } from './pcap-stream';
import type { DecodedUnit } from './stream-decoder';
import { TappedConnection, type DecodeOptions } from './tapped-connection';

export interface PassiveTapOptions extends Omit<
  DecodeOptions,
  'listenPort' | 'onUnit' | 'onClose' | 'onLog'
> {
  /** The server whose connections are watched (a loopback address). */
  serverHost: string;
  serverPort: number;
  /** The capture command (default `tcpdump`). */
  tcpdump?: string;
  /** Hold the capture's reader while loopback is busy (default true). */
  pace?: boolean;
  onUnit(link: TraceLink, u: DecodedUnit): void;
  onClose?(link: TraceLink | null, by: 'client' | 'server', reset: boolean, t: number): void;
  onLog?(level: 'info' | 'warn' | 'error', message: string): void;
}

export class PassiveTapError extends Error {
  constructor(
    readonly code: 'NO_CAPTURE' | 'NOT_LOOPBACK',
    message: string,
  ) {
    super(message);
    this.name = 'PassiveTapError';
  }
}

const LOOPBACK_COUNTER = '/sys/class/net/lo/statistics/tx_bytes';

/** Loopback's byte counter read in place (one pread per poll), or null where there is none. */
function loopbackCounter(): (() => number) | null {
  let fd: number;
  try {
    fd = fs.openSync(LOOPBACK_COUNTER, 'r');
  } catch {
    return null;
  }
  const buf = Buffer.alloc(32);
  return () => {
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    return Number(buf.toString('latin1', 0, n).trim());
  };
}

/**
 * Whether tcpdump sleeps in poll(): in immediate mode it polls only once its ring is empty, so it has
 * read everything. From /proc/PID/wchan (its own user may read it); null where that says nothing.
 */
function readerIdleProbe(pid: number | undefined): () => boolean | null {
  let fd: number | null = null;
  try {
    if (pid !== undefined) fd = fs.openSync(`/proc/${pid}/wchan`, 'r');
  } catch {
    fd = null;
  }
  const buf = Buffer.alloc(64);
  return () => {
    if (fd === null) return null;
    try {
      const where = buf.toString('latin1', 0, fs.readSync(fd, buf, 0, buf.length, 0));
      return where === '0' || where === '' ? null : where.includes('poll');
    } catch {
      return null;
    }
  };
}

export class PassiveTap {
  private readonly conns = new Set<TappedConnection>();
  private readonly streams: LiveTcpStreams;
  private readonly reader = new PcapStreamReader();
  private pacer: CapturePacer | null = null;
  private poll: NodeJS.Timeout | null = null;
  private stderr = '';
  private readonly exited: Promise<void>;
  private nextIndex = 0;
  private lastDataAt = 0;
  private broken = false;
  private closing = false;
  /**
   * Resolves, with why, if tcpdump ends before close() asked it to (killed, its device gone): from
   * then on nothing is seen, and the tap says so rather than watching on blind.
   */
  readonly captureEnded: Promise<string>;
  /** Packets read from the capture. */
  packets = 0;
  readonly now: () => number;

  private constructor(
    private readonly o: PassiveTapOptions,
    private readonly proc: ChildProcess,
  ) {
    const t0 = performance.now();
    this.now = () => performance.now() - t0;
    const epochT0 = performance.timeOrigin + t0;
    this.streams = new LiveTcpStreams(
      { host: o.serverHost, port: o.serverPort },
      (ends) => {
        const conn = new TappedConnection(
          this.nextIndex++,
          { ...o, listenPort: o.serverPort },
          ends,
          this.now,
        );
        this.conns.add(conn);
        return {
          observe: (dir, bytes, t) => conn.observe(dir, bytes, t),
          lost: (dir, bytes, t) => conn.lost(dir, bytes, t),
          ended: (dir, by, reset, t) => conn.ended(dir, by, reset, t),
          // Both directions over: whatever is still queued is decoded now, before it is let go.
          dispose: () => {
            conn.flush();
            conn.dispose();
            this.conns.delete(conn);
          },
        };
      },
      (epochMs) => epochMs - epochT0,
    );
    proc.stderr!.on('data', (d: Buffer) => (this.stderr = (this.stderr + d.toString()).slice(-8000)));
    proc.stdout!.on('data', (d: Buffer) => this.bytes(d));
    this.exited = new Promise<void>((r) => proc.once('close', () => r()));
    this.captureEnded = new Promise<string>((resolve) =>
      proc.once('close', (code, signal) => {
        if (this.closing) return;
        if (this.poll) clearInterval(this.poll);
        const last = this.stderr.trim().split('\n').pop() ?? '';
        const why = `the capture ended: tcpdump exited (${signal ?? `code ${code}`})${last ? `: ${last}` : ''}`;
        this.o.onLog?.('error', `passive tap: ${why}`);
        resolve(why);
      }),
    );
  }

  static async start(o: PassiveTapOptions): Promise<PassiveTap> {
    if (!/^127\.|^::1$|^localhost$/.test(o.serverHost))
      throw new PassiveTapError(
        'NOT_LOOPBACK',
        `a passive tap watches loopback only (lo); ${o.serverHost} is not a loopback address`,
      );
    const host = o.serverHost === 'localhost' ? '127.0.0.1' : o.serverHost;
    const cmd = o.tcpdump ?? 'tcpdump';
    const filter = ['tcp', 'port', String(o.serverPort), 'and', 'host', host];
    const proc = spawnTied(cmd, loopbackCaptureArgs(filter, '-', { immediate: true }), {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const tap = new PassiveTap({ ...o, serverHost: host }, proc);
    try {
      await untilCapturing(proc, cmd, () => tap.stderr, tap.exited);
    } catch (e) {
      proc.kill('SIGKILL');
      throw new PassiveTapError('NO_CAPTURE', `no loopback capture: ${(e as Error).message}`);
    }
    if (o.pace !== false) tap.startPacing();
    return tap;
  }

  private startPacing(): void {
    const counter = loopbackCounter();
    if (!counter) {
      this.o.onLog?.('warn', `passive tap: no ${LOOPBACK_COUNTER}; the capture reads as packets come`);
      return;
    }
    this.pacer = new CapturePacer({
      readCounter: counter,
      readerIdle: readerIdleProbe(this.proc.pid),
      hold: () => this.proc.kill('SIGSTOP'),
      release: () => this.proc.kill('SIGCONT'),
    });
    this.poll = setInterval(() => this.pacer!.tick(), 1);
  }

  /** Times the capture's reader was let go so far, and let go by a bound while bytes still moved. */
  get pacing(): { releases: number; forcedReleases: number } | null {
    return this.pacer && { releases: this.pacer.releases, forcedReleases: this.pacer.forcedReleases };
  }

  private bytes(d: Buffer): void {
    this.lastDataAt = performance.now();
    if (this.broken) return;
    try {
      for (const p of this.reader.push(d)) {
        this.packets++;
        const s = segmentOf(p);
        if (s) this.streams.segment(s);
      }
    } catch (e) {
      // A capture stream this reader cannot follow: say so once and stop decoding (never a crash).
      this.broken = true;
      this.o.onLog?.('error', `passive tap: capture stream unreadable: ${(e as Error).message}`);
    }
  }

  /**
   * Reads what the ring still holds (the reader let go, until the capture has been quiet for
   * 100 ms or 5 s have passed), stops tcpdump, and decodes everything; resolves once every unit
   * has reached onUnit.
   */
  async close(): Promise<void> {
    this.closing = true;
    if (this.poll) clearInterval(this.poll);
    this.pacer?.stop();
    this.proc.kill('SIGCONT');
    // The reader gets at least 100 ms to start on what the ring holds, then until it goes quiet.
    this.lastDataAt = performance.now();
    const until = performance.now() + 5_000;
    while (performance.now() < until && performance.now() - this.lastDataAt < 100)
      await new Promise((r) => setTimeout(r, 10));
    this.proc.kill('SIGTERM');
    await this.exited;
    const dropped = droppedByKernel(this.stderr);
    if (dropped > 0)
      this.o.onLog?.(
        'warn',
        `passive tap: the kernel dropped ${dropped} packets (its ring was full): gaps named`,
      );
    this.streams.closeAll(this.now());
    for (const c of this.conns) {
      c.flush();
      c.dispose();
    }
    this.conns.clear();
  }
}
