// The hint renders while the store says so, with a way into the tour and a way to dismiss it.
import { describe, expect, it } from 'vitest';
import { renderToStaticMarkup } from 'react-dom/server';
import { TourHint } from './TourHint';
import { createTourHint, TOUR_HINT_KEY } from '../lib/tour-hint';

const storage = (seen: boolean) => ({
  getItem: (k: string) => (seen && k === TOUR_HINT_KEY ? '1' : null),
  setItem: () => {},
});

describe('TourHint', () => {
  it('points a first visit at the guided tour, dismissable', () => {
    const html = renderToStaticMarkup(<TourHint store={createTourHint(storage(false))} />);
    expect(html).toMatch(/aria-label="Start here"/);
    expect(html).toMatch(/Guided tour/);
    expect(html).toMatch(/>Take the tour</);
    // The tour's toolbar button is in More ▾ at 1024 and 1440 wide: "(toolbar)" sent people looking.
    expect(html).not.toMatch(/\(toolbar\)/);
    expect(html).toMatch(/More ▾/);
    expect(html).toMatch(/aria-label="Dismiss the tour hint"/);
  });

  it('says nothing once seen', () => {
    expect(renderToStaticMarkup(<TourHint store={createTourHint(storage(true))} />)).toBe('');
  });
});
