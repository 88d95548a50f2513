// The toolbar of a narrow window (1024 wide): Record and its "● Recording (N)" are
// inside "More", so the recording state has to stay on the line by other means.
import { describe, it, expect, vi } from 'vitest';
import { renderToStaticMarkup } from 'react-dom/server';
import { Toolbar } from './Toolbar';
import { useLab } from '../store/lab-store';
import { useRepro } from '../store/repro-store';
import { snapshot } from '../test-fixtures';

// Narrow: the media query for an inline row of controls does not match.
vi.mock('../lib/use-media-query', () => ({ useMediaQuery: () => false }));

describe('the toolbar of a narrow window', () => {
  it('keeps "● recording" on the line while Record, in "More", records', () => {
    Object.assign(useLab.getInitialState(), { snapshot: snapshot({ running: true }), connection: 'open' });
    const idle = renderToStaticMarkup(<Toolbar />);
    // Record is not on the line here (it is in the closed "More" menu).
    expect(idle).not.toContain('>Record<');
    expect(idle).not.toContain('● recording');
    Object.assign(useRepro.getInitialState(), {
      recording: { on: true, actions: 3, rounds: 9, fromRound: 2 },
    });
    expect(renderToStaticMarkup(<Toolbar />)).toContain('● recording');
  });
});
