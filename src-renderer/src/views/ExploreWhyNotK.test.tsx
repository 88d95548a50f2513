// Explore says why "fold 2.05x faster (K=4)" is not 4x and reveals that case's stage breakdown.
import { describe, expect, it } from 'vitest';
import { renderToStaticMarkup } from 'react-dom/server';
import { ExploreWhyNotK } from './ExploreWhyNotK';
import type { SweepCase, SweepResult } from '@shared/sweep/types';

const kase = (mode: 'fold' | 'direct', median: number, medianMs: Record<string, number>) =>
  ({
    topology: '1x4',
    ranksPerHost: [4],
    mode,
    roundsCompleted: 3,
    roundMs: { median, p90: median },
    stages: { medianMs, share: {}, sumOfMediansMs: 0 },
  }) as unknown as SweepCase;

const result = {
  spec: {},
  cases: [kase('fold', 10, { rankEncodeSend: 3, uplink: 1.5 }), kase('direct', 20.5, { rankEncodeSend: 3 })],
} as unknown as SweepResult;

describe('ExploreWhyNotK (issue 30 #16)', () => {
  it('says why not 4x with a button to the stage breakdown, closed at first', () => {
    const html = renderToStaticMarkup(<ExploreWhyNotK result={result} />);
    expect(html).toMatch(/2\.05x faster, not 4x/);
    expect(html).toMatch(/<button[^>]*aria-expanded="false"[^>]*>Show the stage breakdown of 1x4<\/button>/);
    expect(html).not.toMatch(/<table/);
  });

  it('reveals fold\u2019s and direct\u2019s stage medians side by side', () => {
    const html = renderToStaticMarkup(<ExploreWhyNotK result={result} initiallyOpen />);
    expect(html).toMatch(/aria-label="Stage breakdown of 1x4"/);
    expect(html).toMatch(/rankEncodeSend<\/td><td class="mono">3.00 ms<\/td><td class="mono">3.00 ms/);
    expect(html).toMatch(/uplink<\/td><td class="mono">1.50 ms<\/td><td class="mono">–/);
  });
});
