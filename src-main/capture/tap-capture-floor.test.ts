// The capture floor on tiny sizes: a figure where tcpdump may capture on lo, a named skip where not.
import { describe, expect, it } from 'vitest';
import { nodeMac } from '../crypto/node-mac';
import { saltFromHex } from '@shared/wire/salt';
import { benchCaptureFloor } from './tap-capture-floor';

const mac = nodeMac(saltFromHex('42'.repeat(16)));

describe('capture floor', () => {
  it('says why it has no figure when the capture command is not there', async () => {
    const r = await benchCaptureFloor(mac, {
      recordBytes: 64 * 1024,
      repeats: 1,
      blocks: 1,
      tcpdump: 'relay-lab-no-such-capture',
    });
    expect(r).toEqual({
      skipped: expect.stringMatching(/^no loopback capture here: .*(ENOENT|No such file)/),
    });
  });

  it('times a record with tcpdump reading and stopped, or names what stopped it', async () => {
    const r = await benchCaptureFloor(mac, { recordBytes: 64 * 1024, repeats: 1, blocks: 1 });
    if ('skipped' in r) {
      console.log(`capture floor: ${r.skipped}`);
      // CI runs as root with tcpdump installed (.ci/run): there it must capture.
      expect(process.env.CI === 'true' && process.getuid?.() === 0).toBe(false);
      return;
    }
    for (const v of [r.rawMs, r.capturedMs, r.kernelCopyMs, r.captureOverDirect, r.kernelCopyOverDirect])
      expect(Number.isFinite(v) && v > 0).toBe(true);
    expect(r.droppedByKernel).toBe(0);
  }, 30_000);
});
