// A reproduction's run picture: its round numbers and its kill and fault marks
// never print over each other, however close in time (the replay picture
// overprinted "kill rank 1", "pause rank 2" and the round numbers of a stall).
import { describe, expect, it } from 'vitest';
import { renderToStaticMarkup } from 'react-dom/server';
import type { RunPicture } from '@shared/repro/picture';
import { RunPictureView } from './RunPictureView';

/** Each text element of `cls`: its x, y, anchor and text. */
function texts(html: string, cls: string) {
  const re = new RegExp(
    `<text class="${cls}" x="([\\d.]+)" y="([\\d.]+)"(?: text-anchor="(\\w+)")?>([^<]*)</text>`,
    'g',
  );
  return [...html.matchAll(re)].map((m) => ({ x: Number(m[1]), y: Number(m[2]), anchor: m[3], text: m[4] }));
}

/** Labels of one row overlap when the next starts before the last one ends (8 px mono, 0.6 em a character). */
function overlaps(labels: { x: number; y: number; anchor?: string; text: string }[]): string[] {
  const bad: string[] = [];
  const byRow = new Map<number, { start: number; end: number; text: string }[]>();
  for (const l of labels) {
    const w = l.text.length * 8 * 0.6;
    const start = l.anchor === 'middle' ? l.x - w / 2 : l.x;
    byRow.set(l.y, [...(byRow.get(l.y) ?? []), { start, end: start + w, text: l.text }]);
  }
  for (const row of byRow.values()) {
    row.sort((a, b) => a.start - b.start);
    for (let i = 1; i < row.length; i++)
      if (row[i].start < row[i - 1].end) bad.push(`${row[i - 1].text} / ${row[i].text}`);
  }
  return bad;
}

describe('run picture', () => {
  it('draws its marks and round numbers without printing one over another', () => {
    const picture: RunPicture = {
      durationMs: 10_000,
      lanes: ['h0.uplink.data', 'h1.uplink.data'],
      units: [{ seq: 1, t: 100, lane: 0, kind: 'HostFrame', dir: 'up', ok: true }] as RunPicture['units'],
      records: 1,
      // A kill, a pause and a resume within a stalled round, 60 ms apart, and rounds every 50 ms.
      marks: [
        { t: 4000, label: 'kill rank 1' },
        { t: 4060, label: 'pause rank 2' },
        { t: 4120, label: 'resume rank 2' },
        { t: 9000, label: 'kill host 1' },
      ],
      rounds: Array.from({ length: 40 }, (_, i) => ({ round: 100 + i, t: 1000 + 50 * i, verdict: 'ok' })),
    };
    const html = renderToStaticMarkup(<RunPictureView picture={picture} label="Run" />);
    const marks = texts(html, 'mark-label');
    const rounds = texts(html, 'round-label');
    expect(overlaps(marks)).toEqual([]);
    expect(overlaps(rounds)).toEqual([]);
    // The first mark and the far one keep their labels, and every mark its line and tooltip.
    expect(marks.map((m) => m.text)).toEqual(expect.arrayContaining(['kill rank 1', 'kill host 1']));
    expect(html.match(/<line class="mark"/g)).toHaveLength(4);
    expect(html).toContain('<title>resume rank 2</title>');
    expect(rounds.length).toBeGreaterThan(3);
  });
});
