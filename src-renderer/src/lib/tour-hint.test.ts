// The first-visit hint: shown until dismissed or until the tour has been opened once, remembered.
import { describe, expect, it } from 'vitest';
import { createTourHint, TOUR_HINT_KEY } from './tour-hint';
import { useTeach } from '../store/teach-store';

function memoryStorage(init: Record<string, string> = {}) {
  const m = new Map(Object.entries(init));
  return {
    getItem: (k: string) => m.get(k) ?? null,
    setItem: (k: string, v: string) => void m.set(k, v),
    m,
  };
}

describe('first-visit tour hint (issue 30 #16: nothing said "start here")', () => {
  it('shows on a first visit, not once dismissed, and remembers it', () => {
    const storage = memoryStorage();
    const hint = createTourHint(storage);
    expect(hint.getState().show).toBe(true);
    hint.getState().dismiss();
    expect(hint.getState().show).toBe(false);
    expect(storage.m.get(TOUR_HINT_KEY)).toBe('1');
    expect(createTourHint(storage).getState().show).toBe(false);
  });

  it('goes away for good once the tour opens, by the hint or the toolbar button', () => {
    const storage = memoryStorage();
    const hint = createTourHint(storage);
    useTeach.setState({ tourOpen: true });
    expect(hint.getState().show).toBe(false);
    expect(storage.m.get(TOUR_HINT_KEY)).toBe('1');
    useTeach.setState({ tourOpen: false });

    const again = createTourHint(memoryStorage());
    again.getState().openTour();
    expect(useTeach.getState().tourOpen).toBe(true);
    expect(again.getState().show).toBe(false);
    useTeach.setState({ tourOpen: false });
  });

  it('shows (and does not throw) where storage is unavailable', () => {
    const broken = {
      getItem: () => {
        throw new Error('denied');
      },
      setItem: () => {
        throw new Error('denied');
      },
    };
    const hint = createTourHint(broken);
    expect(hint.getState().show).toBe(true);
    expect(() => hint.getState().dismiss()).not.toThrow();
    expect(hint.getState().show).toBe(false);
  });
});
