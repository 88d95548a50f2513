import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import {
  fieldPathAtOffset,
  byteRangeOf,
  fieldAt,
  visibleFieldRows,
  ancestorKeys,
  hexToBytes,
  asciiOf,
  type FieldLike,
} from './field-ranges';

// The shape of a HostFrame dissection: a 25-byte mux header, then a nested RoundFrame.
const fields: FieldLike[] = [
  {
    name: 'mux header',
    offset: 0,
    length: 25,
    value: '',
    children: [
      { name: 'magic', offset: 0, length: 4, value: '0x…' },
      { name: 'version', offset: 4, length: 1, value: '1' },
      { name: 'kind', offset: 5, length: 1, value: 'HostFrame' },
      { name: 'rank', offset: 6, length: 4, value: '0' },
      { name: 'payload length', offset: 10, length: 7, value: '64' },
      { name: 'tag', offset: 17, length: 8, value: '…' },
    ],
  },
  {
    name: 'RoundFrame',
    offset: 25,
    length: 64,
    value: '',
    children: [
      { name: 'round kind', offset: 25, length: 1, value: 'Model' },
      {
        name: 'tensors',
        offset: 26,
        length: 55,
        value: '1',
        children: [
          {
            name: 'tensor 0',
            offset: 26,
            length: 55,
            value: 'f32 [8]',
            children: [{ name: 'data', offset: 49, length: 32, value: '' }],
          },
        ],
      },
      { name: 'tag', offset: 81, length: 8, value: '' },
    ],
  },
];

describe('hex and field-range linking', () => {
  it('a byte selects the deepest field that holds it', () => {
    expect(fieldPathAtOffset(fields, 0)).toEqual([0, 0]);
    expect(fieldPathAtOffset(fields, 5)).toEqual([0, 2]);
    expect(fieldPathAtOffset(fields, 24)).toEqual([0, 5]);
    expect(fieldPathAtOffset(fields, 25)).toEqual([1, 0]);
    expect(fieldPathAtOffset(fields, 30)).toEqual([1, 1, 0]);
    expect(fieldPathAtOffset(fields, 60)).toEqual([1, 1, 0, 0]);
    expect(fieldPathAtOffset(fields, 88)).toEqual([1, 2]);
    expect(fieldPathAtOffset(fields, 89)).toBeNull();
  });

  it('a field highlights its bytes, clipped to what was captured', () => {
    expect(byteRangeOf(fields, [0, 4], 100)).toEqual({ start: 10, end: 17 });
    expect(byteRangeOf(fields, [1], 40)).toEqual({ start: 25, end: 40 });
    expect(byteRangeOf(fields, [9], 100)).toBeNull();
  });

  it('selecting the field of any byte highlights a range holding that byte (round trip)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 88 }), (offset) => {
        const path = fieldPathAtOffset(fields, offset)!;
        const range = byteRangeOf(fields, path, 89)!;
        expect(offset).toBeGreaterThanOrEqual(range.start);
        expect(offset).toBeLessThan(range.end);
        expect(fieldAt(fields, path)).toBeDefined();
      }),
      { seed: 9, numRuns: 200 },
    );
  });

  it('lists visible rows given the expanded paths, and the ancestors to expand for a selection', () => {
    expect(visibleFieldRows(fields, new Set()).map((r) => r.field.name)).toEqual([
      'mux header',
      'RoundFrame',
    ]);
    const rows = visibleFieldRows(fields, new Set(['1', '1.1']));
    expect(rows.map((r) => `${r.depth}:${r.field.name}`)).toEqual([
      '0:mux header',
      '0:RoundFrame',
      '1:round kind',
      '1:tensors',
      '2:tensor 0',
      '1:tag',
    ]);
    expect(ancestorKeys([1, 1, 0])).toEqual(['1', '1.1', '1.1.0']);
  });

  it('decodes hex and renders ASCII like a hex dump', () => {
    expect(Array.from(hexToBytes('00ff41'))).toEqual([0, 255, 65]);
    expect(() => hexToBytes('0g')).toThrow();
    expect(asciiOf(65)).toBe('A');
    expect(asciiOf(10)).toBe('.');
  });
});

describe('the hex offset column', () => {
  it('has as many digits as the last row needs, at least 4 (8 for every unit overflowed a 400 px inspector)', async () => {
    const { offsetDigits } = await import('./field-ranges');
    expect(offsetDigits(0)).toBe(4);
    expect(offsetDigits(27)).toBe(4);
    // The default snap length: the last row starts at 0xfff0.
    expect(offsetDigits(65_536)).toBe(4);
    expect(offsetDigits(65_537)).toBe(5);
    expect(offsetDigits(4_194_351)).toBe(6);
    expect(offsetDigits(16_777_216)).toBe(6);
    expect(offsetDigits(16_777_217)).toBe(7);
  });
});

describe('bytes a hex row shows', () => {
  it('16 where they fit with their ASCII, 8 in the 338 px inspector of a 1024-wide window', async () => {
    const { hexBytesPerRow } = await import('./field-ranges');
    const { hexKeyOffset } = await import('./pane-keys');
    // DejaVu Sans Mono at 11 px: 6.62 px a character; a 16-byte row with 4 offset digits is 390 px.
    expect(hexBytesPerRow(473, 6.62, 4)).toBe(16);
    expect(hexBytesPerRow(398, 6.62, 4)).toBe(16);
    expect(hexBytesPerRow(336, 6.62, 4)).toBe(8);
    expect(hexBytesPerRow(398, 6.62, 6)).toBe(8);
    // Not measured yet (no row drawn): 16.
    expect(hexBytesPerRow(0, 0, 4)).toBe(16);
    // ↓ and ↑ move by the row shown.
    expect(hexKeyOffset({ start: 3, end: 4 }, 64, 'ArrowDown', 8)).toBe(11);
    expect(hexKeyOffset({ start: 3, end: 4 }, 64, 'ArrowDown')).toBe(19);
    expect(hexKeyOffset({ start: 11, end: 12 }, 64, 'ArrowUp', 8)).toBe(3);
  });
});
