// A rejected unit explained: flodl's two tags, the bytes as sent, and what
// the rejection did to the host under each loss policy.
import { describe, it, expect } from 'vitest';
import { bytesAsSent, hostLossExplained, tagsOf } from './rejection';
import { record } from '../test-fixtures';

const flodl =
  'relay_mux: HMAC verification failed (computed 0x845b6f6637cbb310, wire carried 0xcd8a005e6e48f62b); session salt disagreement, tampered record, or corruption (kind=0x03, rank=0, len=8235)';

describe('rejection', () => {
  it("reads flodl's computed and carried tags", () => {
    expect(tagsOf(flodl)).toEqual({ computed: '845b6f6637cbb310', carried: 'cd8a005e6e48f62b' });
    expect(tagsOf('relay_mux: unknown record kind 0x09')).toBeNull();
    expect(tagsOf(undefined)).toBeNull();
  });

  it('puts the flipped byte back for the bytes as sent, and leaves the received bytes alone', () => {
    const received = Uint8Array.of(1, 2, 0xe6, 4);
    const r = record(1, {
      verdict: 'HMAC_MISMATCH',
      corruption: { offset: 2, sent: 0xf6, received: 0xe6, windowOffset: 0, sentHex: '', receivedHex: '' },
    });
    expect([...bytesAsSent(received, r)]).toEqual([1, 2, 0xf6, 4]);
    expect([...received]).toEqual([1, 2, 0xe6, 4]);
    // A flip past the kept bytes changes nothing shown.
    const far = { ...r, corruption: { ...r.corruption!, offset: 10 } };
    expect(bytesAsSent(received, far)).toBe(received);
  });

  it("says why the host was lost: flodl's reduce ends; elastic drops the host (lab-only); strict does as flodl", () => {
    const r = record(1, { verdict: 'HMAC_MISMATCH', host: 0, link: 'h0.uplink.data', dir: 'up' });
    const elastic = hostLossExplained(r, 'elastic')!;
    expect(elastic).toContain("becomes the reduce loop's error");
    expect(elastic).toContain('declares its ranks dead');
    expect(elastic).toContain('lab-only');
    expect(hostLossExplained(r, 'strict')).toContain('does the same and shuts the reduce down');
    expect(hostLossExplained({ ...r, verdict: 'ok' }, 'elastic')).toBeNull();
    expect(hostLossExplained({ ...r, link: 'h0.r0.data' }, 'elastic')).toBeNull();
  });

  it('a run with no topology (a socket-level trace) lost no host or rank: no elastic story', () => {
    const r = record(1, { verdict: 'HMAC_MISMATCH', host: 0, link: 'h0.uplink.data', dir: 'up' });
    const none = hostLossExplained(r, null)!;
    expect(none).toContain('no topology');
    expect(none).toContain('no host or rank was lost');
    expect(none).not.toMatch(/elastic|declares its ranks dead|exit with code 1/);
  });
});
