import { describe, expect, it } from 'vitest';
import type { UnitRecord } from '@shared/lab/records';
import { record } from '../test-fixtures';
import { paintRows, type RowPaintStyle } from './row-paint';

// The shared fixture, with a model-sized length and a summary as the engine writes one.
const rec = (seq: number, over: Partial<UnitRecord> = {}): UnitRecord =>
  record(seq, {
    t: 1234.5,
    length: 262212,
    captured: 262212,
    summary: 'HostFrame r=3 1 tensor w=4',
    ...over,
  });

const columns: RowPaintStyle['columns'] = [
  { left: 8, width: 50 },
  { left: 63, width: 52 },
  { left: 120, width: 40 },
  { left: 165, width: 18 },
  null, // Layer hidden, as a narrow list or the column chooser hides it
  { left: 188, width: 96 },
  { left: 289, width: 32 },
  { left: 326, width: 86 },
  { left: 417, width: 64 },
  { left: 486, width: 400 },
];

const style = (): RowPaintStyle => ({
  columns,
  fitted: columns.map(() => new Map()),
  mono: '12px monospace',
  sans: '12px sans-serif',
  colors: {
    text: 'T',
    muted: 'M',
    ok: 'OK',
    bad: 'BAD',
    warn: 'W',
    up: 'UP',
    down: 'DN',
    accent: 'AC',
    rowAlt: 'ALT',
  },
});

/** A 2D context that records what was drawn (text and measureText's width: 6 px a character). */
function recordingContext() {
  const texts: { text: string; x: number; y: number; font: string; fill: string }[] = [];
  const rects: { fill: string; alpha: number; y: number }[] = [];
  let fontSets = 0;
  const state = { fillStyle: '', font: '', textAlign: '', textBaseline: '', globalAlpha: 1 };
  const ctx = {
    get fillStyle() {
      return state.fillStyle;
    },
    set fillStyle(v: string) {
      state.fillStyle = v;
    },
    get font() {
      return state.font;
    },
    set font(v: string) {
      fontSets++;
      state.font = v;
    },
    set textAlign(v: string) {
      state.textAlign = v;
    },
    set textBaseline(v: string) {
      state.textBaseline = v;
    },
    get globalAlpha() {
      return state.globalAlpha;
    },
    set globalAlpha(v: number) {
      state.globalAlpha = v;
    },
    setTransform() {},
    clearRect() {},
    fillRect(_x: number, y: number) {
      rects.push({ fill: state.fillStyle, alpha: state.globalAlpha, y });
    },
    measureText: (t: string) => ({ width: t.length * 6 }),
    fillText(text: string, x: number, y: number) {
      texts.push({ text, x, y, font: state.font, fill: state.fillStyle });
    },
  };
  return { ctx: ctx as unknown as CanvasRenderingContext2D, texts, rects, fontSets: () => fontSets };
}

const paint = (rows: UnitRecord[], selectedSeq: number | null = null) => {
  const r = recordingContext();
  paintRows(
    r.ctx,
    rows.map((record, i) => ({ record, index: 10 + i })),
    style(),
    { width: 900, height: rows.length * 22, rowHeight: 22, selectedSeq, scale: 1 },
  );
  return r;
};

describe('paintRows', () => {
  it('draws every shown cell of every row at its column, row by row down the canvas', () => {
    const { texts } = paint([rec(1), rec(2, { rank: 0 })]);
    // Layer hidden; rank empty in the first row: 8 cells, then 9.
    expect(texts.filter((t) => t.y === 11).map((t) => t.text)).toEqual([
      '1',
      '1.234',
      'h0.up…',
      '↑',
      'HostFrame',
      '262,212',
      'ok',
      'HostFrame r=3 1 tensor w=4',
    ]);
    expect(texts.filter((t) => t.y === 33)).toHaveLength(9);
    expect(texts.find((t) => t.text === '2')!.x).toBe(8);
    // Length is right-aligned at its column's right edge.
    expect(texts.find((t) => t.text === '262,212')!.x).toBe(326 + 86);
  });

  it('sets the font once a column, not once a cell', () => {
    const rows = Array.from({ length: 27 }, (_, i) => rec(i));
    const r = paint(rows);
    expect(r.fontSets()).toBe(9);
    expect(r.texts.filter((t) => t.text === 'HostFrame').every((t) => t.font === style().sans)).toBe(true);
    expect(r.texts.filter((t) => t.text === '1.234').every((t) => t.font === style().mono)).toBe(true);
  });

  it('colours by meaning: direction, verdict, muted info, white on the selected row', () => {
    const { texts, rects } = paint([rec(1), rec(2, { dir: 'down', verdict: 'HMAC_MISMATCH' }), rec(3)], 3);
    const at = (y: number, text: string) => texts.find((t) => t.y === y && t.text === text)!;
    expect(at(11, 'HostFrame').fill).toBe('UP');
    expect(at(11, 'ok').fill).toBe('OK');
    expect(at(11, 'HostFrame r=3 1 tensor w=4').fill).toBe('M');
    expect(at(33, 'HostFrame').fill).toBe('DN');
    expect(at(33, 'HMAC_MISM…').fill).toBe('BAD');
    expect(texts.filter((t) => t.y === 55).every((t) => t.fill === '#fff')).toBe(true);
    // Backgrounds: the rejected row tinted, the selected row in the accent; row 10 (even) plain.
    expect(rects).toEqual([
      { fill: 'BAD', alpha: 0.14, y: 22 },
      { fill: 'AC', alpha: 1, y: 44 },
    ]);
  });

  it('cuts a cell wider than its column with an ellipsis, as the DOM row does, measuring each text once', () => {
    const r = recordingContext();
    let measured = 0;
    const measure = r.ctx.measureText.bind(r.ctx);
    r.ctx.measureText = (t: string) => (measured++, measure(t));
    const st = style();
    const rows = [rec(1), rec(2)].map((record, index) => ({ record, index }));
    const opts = { width: 900, height: 44, rowHeight: 22, selectedSeq: null, scale: 1 };
    paintRows(r.ctx, rows, st, opts);
    // 6 px a character: 'h0.up…' is the longest head of the link that fits 40 px with its ellipsis.
    expect(r.texts.filter((t) => t.text === 'h0.up…')).toHaveLength(2);
    expect(r.texts.some((t) => t.text === 'ok')).toBe(true);
    const once = measured;
    paintRows(r.ctx, rows, st, opts);
    expect(measured).toBe(once);
  });

  it("draws a short capture's star after its length in the warning colour, on the selected row too", () => {
    const { texts } = paint([rec(1, { captured: 100 }), rec(2, { captured: 100 })], 2);
    const stars = texts.filter((t) => t.text === '*');
    expect(stars.map((t) => t.fill)).toEqual(['W', 'W']);
    expect(stars.every((t) => t.x === 326 + 86)).toBe(true);
    const lengths = texts.filter((t) => t.text === '262,212');
    expect(lengths.map((t) => [t.fill, t.x])).toEqual([
      ['T', 326 + 86 - 6],
      ['#fff', 326 + 86 - 6],
    ]);
  });

  it('fits a starred length in the room its star leaves, apart from the same number without one', () => {
    const narrow = style();
    narrow.columns[7] = { left: 326, width: 42 }; // 7 characters at 6 px
    const r = recordingContext();
    const rows = [rec(1), rec(2, { captured: 1 })].map((record, index) => ({ record, index }));
    paintRows(r.ctx, rows, narrow, { width: 900, height: 44, rowHeight: 22, selectedSeq: null, scale: 1 });
    // Without a star the number fits its 42 px; with one it has 36 px: five characters and the ellipsis.
    expect(r.texts.filter((t) => t.text.startsWith('262')).map((t) => t.text)).toEqual(['262,212', '262,2…']);
  });

  it('draws nothing in a column too narrow for its ellipsis', () => {
    const tiny = style();
    tiny.columns[2] = { left: 120, width: 4 };
    const r = recordingContext();
    const opts = { width: 900, height: 22, rowHeight: 22, selectedSeq: null, scale: 1 };
    paintRows(r.ctx, [{ record: rec(1), index: 0 }], tiny, opts);
    expect(r.texts.filter((t) => t.x === 120).map((t) => t.text)).toEqual(['']);
  });
});
