// The cheapest observer Linux has, for the tap bench: the kernel's own packet
// capture on loopback (tcpdump on `lo`, a 256 MiB ring), which sits in no
// path and copies each packet once into its ring. One 8 MiB record is timed
// straight to a receiver with no capture, with tcpdump reading, and with
// tcpdump stopped (SIGSTOP: only the kernel's copy into the ring is left).
// What that costs is a floor no user-space tap can go under on this machine;
// the tap's own figure is read against it. Needs tcpdump and the right to
// capture (root or CAP_NET_RAW); without them the figure says why it is
// missing.
import type { ChildProcess } from 'node:child_process';
import type { Mac } from '@shared/wire/mac';
import { spawnTied } from '../shell-common/tied-spawn';
import { droppedByKernel, loopbackCaptureArgs, untilCapturing } from './loopback-capture';
import { byteSink, close, portOf, timedSend, uplinkChunks } from './tap-bench-io';

export interface CaptureFloorOptions {
  recordBytes: number;
  /** Sends per mode in each block (default 5). */
  repeats?: number;
  /** Blocks of (none, reading, stopped); tcpdump starts afresh in each (default 3). */
  blocks?: number;
  /** The capture command (default `tcpdump`; a test names one that is not there). */
  tcpdump?: string;
}

export type CaptureFloor =
  | {
      bytes: number;
      rawMs: number;
      /** tcpdump capturing and reading its ring as it fills. */
      capturedMs: number;
      /** tcpdump stopped: the kernel still copies every packet into the ring. */
      kernelCopyMs: number;
      captureOverDirect: number;
      kernelCopyOverDirect: number;
      /** Packets tcpdump said the kernel dropped (a full ring), over all blocks. */
      droppedByKernel: number;
    }
  | { skipped: string };

interface Capture {
  proc: ChildProcess;
  stderr: () => string;
  exited: Promise<void>;
}

/** tcpdump on lo for one port, writing nothing anywhere; resolves once it is listening. */
async function startCapture(cmd: string, port: number): Promise<Capture> {
  const proc = spawnTied(cmd, loopbackCaptureArgs(['tcp', 'port', String(port)], '/dev/null'), {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  const exited = new Promise<void>((r) => proc.once('close', () => r()));
  await untilCapturing(proc, cmd, () => err, exited);
  return { proc, stderr: () => err, exited };
}

async function stopCapture(c: Capture): Promise<number> {
  c.proc.kill('SIGCONT');
  c.proc.kill('SIGTERM');
  await c.exited;
  return droppedByKernel(c.stderr());
}

export async function benchCaptureFloor(mac: Mac, o: CaptureFloorOptions): Promise<CaptureFloor> {
  const chunks = uplinkChunks(mac, o.recordBytes, 1);
  const total = chunks.reduce((a, b) => a + b.length, 0);
  const { sink, wait } = await byteSink(total);
  const port = portOf(sink);
  const raw: number[] = [];
  const captured: number[] = [];
  const kernelOnly: number[] = [];
  let dropped = 0;
  const sendInto = async (into: number[]) => {
    for (let i = 0; i < (o.repeats ?? 5); i++) {
      into.push((await timedSend(port, chunks, wait)).ms);
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  try {
    for (let b = 0; b < (o.blocks ?? 3); b++) {
      await sendInto(raw);
      let capture: Capture;
      try {
        capture = await startCapture(o.tcpdump ?? 'tcpdump', port);
      } catch (e) {
        return { skipped: `no loopback capture here: ${(e as Error).message}` };
      }
      try {
        await sendInto(captured);
        capture.proc.kill('SIGSTOP');
        await sendInto(kernelOnly);
      } finally {
        dropped += await stopCapture(capture);
      }
    }
  } finally {
    await close(sink);
  }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  return {
    bytes: total,
    rawMs: med(raw),
    capturedMs: med(captured),
    kernelCopyMs: med(kernelOnly),
    captureOverDirect: med(captured) / med(raw),
    kernelCopyOverDirect: med(kernelOnly) / med(raw),
    droppedByKernel: dropped,
  };
}
