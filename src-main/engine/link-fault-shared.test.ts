import { describe, expect, it } from 'vitest';
import { Shaper, releaseSharedLanes } from './link-fault';

const bytes = (n: number) => new Uint8Array(n);

describe('shared rate lanes (one host NIC for several connections)', () => {
  it('connections naming the same shareKey draw from one rate, per direction', () => {
    const fault = { dir: 'both' as const, bandwidth: 1000, shareKey: 'test-a.h0' };
    const dataUp = new Shaper(fault, 'up');
    const controlUp = new Shaper(fault, 'up');
    const dataDown = new Shaper(fault, 'down');
    // 500 B at 1000 B/s is 500 ms on the wire; the second connection's bytes queue behind the first's.
    expect(dataUp.plan(bytes(500), 0)[0].at).toBe(500);
    expect(controlUp.plan(bytes(500), 0)[0].at).toBe(1000);
    // The other direction is a separate lane (full duplex).
    expect(dataDown.plan(bytes(500), 0)[0].at).toBe(500);
    releaseSharedLanes('test-a.');
  });

  it('without a shareKey every connection keeps its own rate (as before)', () => {
    const fault = { dir: 'both' as const, bandwidth: 1000 };
    const a = new Shaper(fault, 'up');
    const b = new Shaper(fault, 'up');
    expect(a.plan(bytes(500), 0)[0].at).toBe(500);
    expect(b.plan(bytes(500), 0)[0].at).toBe(500);
  });

  it('a released lane starts idle again, and latency is added once per piece', () => {
    const fault = { dir: 'both' as const, bandwidth: 1000, latencyMs: 10, shareKey: 'test-b.h1' };
    expect(new Shaper(fault, 'up').plan(bytes(100), 0)[0].at).toBe(110);
    expect(new Shaper(fault, 'up').plan(bytes(100), 0)[0].at).toBe(210);
    releaseSharedLanes('test-b.');
    expect(new Shaper(fault, 'up').plan(bytes(100), 0)[0].at).toBe(110);
  });
});
