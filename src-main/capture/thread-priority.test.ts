// The tap's decode worker runs at a lower priority than the forwarding (nice
// +10 by default): on a machine with fewer cores than busy threads, decoding
// waits for the bytes to be forwarded, never the other way round.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { saltFromHex } from '@shared/wire/salt';
import { nodeMac } from '../crypto/node-mac';
import { TapProxy } from './tap-proxy';
import { decodeWorkerPath } from './decode-worker-client';

/** The nice value of each of this process's threads (field 19 of /proc/self/task/TID/stat). */
function threadNices(): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of fs.readdirSync('/proc/self/task')) {
    try {
      const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(Number(tid), Number(fields[16]));
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return out;
}

describe.runIf(process.platform === 'linux')('the decode worker thread priority', () => {
  it('is lowered for the worker alone, the forwarding thread keeps its own', async () => {
    expect(decodeWorkerPath(), 'out/node/tap-decode-worker.mjs (npm run build:node)').not.toBeNull();
    const before = threadNices();
    const mine = before.get(process.pid) ?? 0;
    const tap = await TapProxy.start({
      listenPort: 0,
      upstreamHost: '127.0.0.1',
      upstreamPort: 9,
      mac: nodeMac(saltFromHex('11'.repeat(16))),
      onUnit: () => {},
    });
    try {
      let niced: number[] = [];
      for (let i = 0; i < 500 && niced.length === 0; i++) {
        await new Promise((r) => setTimeout(r, 10));
        niced = [...threadNices()]
          .filter(([tid, n]) => !before.has(tid) && n === Math.min(19, mine + 10))
          .map(([t]) => t);
      }
      expect(niced.length).toBe(1);
      expect(threadNices().get(process.pid)).toBe(mine);
    } finally {
      await tap.close();
    }
  });
});
