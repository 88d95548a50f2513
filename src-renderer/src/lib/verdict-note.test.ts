import { describe, expect, it } from 'vitest';
import { verdictNote } from './verdict-note';

const truncated = { verdict: 'TRUNCATED', message: 'peer closed mid-frame' };

describe('verdictNote', () => {
  it('says the engine verified a unit the snap length cut, never TRUNCATED', () => {
    const note = verdictNote({ verdict: 'ok', captured: 65_536, length: 4_194_329 }, truncated)!;
    expect(note).toContain('verified whole by the engine');
    expect(note).toContain('MAC');
    expect(note).toContain('65,536 of its 4,194,329 B');
    expect(note).not.toMatch(/TRUNCATED|do not verify/);
  });

  it("keeps a rejected unit's verdict the engine's", () => {
    const note = verdictNote({ verdict: 'HMAC_MISMATCH', captured: 100, length: 200 }, truncated)!;
    expect(note).toContain("engine's verdict");
    expect(note).not.toContain('TRUNCATED');
  });

  it("shows the dissector's word on whole units, and nothing when it agrees", () => {
    expect(verdictNote({ verdict: 'ok', captured: 27, length: 27 }, truncated)).toBe(
      'dissector: TRUNCATED (peer closed mid-frame)',
    );
    expect(verdictNote({ verdict: 'ok', captured: 27, length: 27 }, { verdict: 'ok' })).toBeNull();
  });
});
