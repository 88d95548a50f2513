import { describe, expect, it } from 'vitest';
import { RoundEndCue } from './round-end-cue';

const settled = async (p: Promise<void>) => {
  let done = false;
  void p.then(() => (done = true));
  await new Promise((r) => setImmediate(r));
  return done;
};

describe('RoundEndCue', () => {
  it('waits for the end of the round asked for, not an earlier one', async () => {
    const cue = new RoundEndCue(() => false);
    const wait = cue.until(3);
    cue.roundEnded(2);
    expect(await settled(wait)).toBe(false);
    cue.roundEnded(3);
    expect(await settled(wait)).toBe(true);
  });

  it('does not wait for a round that has already ended', async () => {
    const cue = new RoundEndCue(() => false);
    cue.roundEnded(5);
    expect(await settled(cue.until(4))).toBe(true);
  });

  it('stops waiting when interrupted (a command arrived, the link failed)', async () => {
    let interrupted = false;
    const cue = new RoundEndCue(() => interrupted);
    const wait = cue.until(0);
    cue.check();
    expect(await settled(wait)).toBe(false);
    interrupted = true;
    cue.check();
    expect(await settled(wait)).toBe(true);
    expect(await settled(cue.until(9))).toBe(true);
  });
});
