// tcpdump on loopback, as the passive tap and the tap bench's capture floor
// both start it: the same ring, snap length and user, the same wait until it
// captures, the same reading of what it dropped.
import type { ChildProcess } from 'node:child_process';

/**
 * tcpdump started as root drops to the `tcpdump` user once it has opened the device, and a change
 * of user clears the parent-death signal spawnTied set: a capture whose parent died (a test run
 * cut short, a killed bench) went on running for good. `-Z root` keeps it the user it was started
 * as, so it dies with its parent. Not root, it changes no user and needs nothing.
 */
function keepUser(): string[] {
  return process.getuid?.() === 0 ? ['-Z', 'root'] : [];
}

/**
 * The arguments for a capture on `lo` of `filter` (a pcap filter, as words), a 256 MiB ring and
 * whole packets, written to `out` ('-': a pcap stream on stdout, packet by packet).
 */
export function loopbackCaptureArgs(
  filter: string[],
  out: '-' | '/dev/null',
  o: { immediate?: boolean } = {},
) {
  return [
    // Immediate mode: each packet is handed over as it comes, not in ring blocks retired up to a
    // second later (the passive tap's pacer, not the block timer, decides when the reader runs).
    ...(o.immediate ? ['--immediate-mode'] : []),
    ...keepUser(),
    '-i',
    'lo',
    '-n',
    ...(out === '-' ? ['-U'] : []),
    '-B',
    '262144',
    '-s',
    '0',
    '-w',
    out,
    ...filter,
  ];
}

/**
 * Resolves once tcpdump says it is capturing; rejects with its last line of stderr if it exits
 * first (no permission, no such device), or after 10 s.
 */
export function untilCapturing(
  proc: ChildProcess,
  cmd: string,
  stderr: () => string,
  exited: Promise<void>,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${cmd} did not start capturing in 10 s`)), 10_000);
    const check = () => {
      if (!/listening on lo/.test(stderr())) return;
      clearTimeout(timer);
      proc.stderr!.off('data', check);
      resolve();
    };
    proc.stderr!.on('data', check);
    proc.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(stderr().trim().split('\n').pop() || `${cmd} exited before capturing`));
    });
  });
}

/** The packets tcpdump's closing lines say the kernel dropped (its ring was full). */
export function droppedByKernel(stderr: string): number {
  return Number(/(\d+) packets? dropped by kernel/.exec(stderr)?.[1] ?? 0);
}
