// The keyboard moves of the inspector's tree and hex pane, the ladder, the
// splitters and the column chooser's grid.
import { describe, it, expect } from 'vitest';
import { hexKeyOffset, ladderKeySeq, treeKeyMove } from './pane-keys';
import { splitterKeyStep } from '../views/Splitter';
import { columnTemplate } from '../views/ColumnChooser';

const rows = [
  { key: 'a', depth: 0, hasChildren: false },
  { key: 'b', depth: 0, hasChildren: true },
  { key: 'b.0', depth: 1, hasChildren: false },
  { key: 'b.1', depth: 1, hasChildren: false },
];

describe('pane keys', () => {
  it('moves in the field tree as the WAI-ARIA tree pattern does', () => {
    const open = new Set(['b']);
    expect(treeKeyMove(rows, null, open, 'ArrowDown')).toEqual({ select: 0 });
    expect(treeKeyMove(rows, 'a', open, 'ArrowDown')).toEqual({ select: 1 });
    expect(treeKeyMove(rows, 'b.1', open, 'ArrowDown')).toEqual({ select: 3 });
    expect(treeKeyMove(rows, 'b', open, 'ArrowUp')).toEqual({ select: 0 });
    // → on a closed parent opens it; on an open one goes to its first child.
    expect(treeKeyMove(rows, 'b', new Set(), 'ArrowRight')).toEqual({ toggle: 'b' });
    expect(treeKeyMove(rows, 'b', open, 'ArrowRight')).toEqual({ select: 2 });
    // ← on an open parent closes it; on a child goes to the parent.
    expect(treeKeyMove(rows, 'b', open, 'ArrowLeft')).toEqual({ toggle: 'b' });
    expect(treeKeyMove(rows, 'b.1', open, 'ArrowLeft')).toEqual({ select: 1 });
    expect(treeKeyMove(rows, 'b', open, 'Enter')).toEqual({ toggle: 'b' });
    expect(treeKeyMove(rows, 'a', open, 'x')).toBeNull();
  });

  it('steps the hex selection by field and by row, within the bytes', () => {
    expect(hexKeyOffset(null, 64, 'ArrowDown')).toBe(0);
    expect(hexKeyOffset({ start: 4, end: 8 }, 64, 'ArrowRight')).toBe(8);
    expect(hexKeyOffset({ start: 4, end: 8 }, 64, 'ArrowLeft')).toBe(3);
    expect(hexKeyOffset({ start: 4, end: 8 }, 64, 'ArrowDown')).toBe(20);
    expect(hexKeyOffset({ start: 4, end: 8 }, 64, 'ArrowUp')).toBe(0);
    expect(hexKeyOffset({ start: 60, end: 64 }, 64, 'ArrowRight')).toBe(63);
    expect(hexKeyOffset({ start: 0, end: 4 }, 64, 'Tab')).toBeNull();
  });

  it('steps through the ladder arrows', () => {
    expect(ladderKeySeq([5, 9, 12], null, 'ArrowDown')).toBe(5);
    expect(ladderKeySeq([5, 9, 12], 9, 'ArrowDown')).toBe(12);
    expect(ladderKeySeq([5, 9, 12], 9, 'ArrowUp')).toBe(5);
    expect(ladderKeySeq([5, 9, 12], null, 'ArrowUp')).toBe(12);
    expect(ladderKeySeq([], null, 'ArrowDown')).toBeNull();
  });

  it('moves a splitter along its own axis only', () => {
    expect(splitterKeyStep('vertical', 'ArrowRight', false)).toEqual({ dx: 16, dy: 0 });
    expect(splitterKeyStep('vertical', 'ArrowLeft', true)).toEqual({ dx: -64, dy: 0 });
    expect(splitterKeyStep('vertical', 'ArrowUp', false)).toBeNull();
    expect(splitterKeyStep('horizontal', 'ArrowDown', false)).toEqual({ dx: 0, dy: 16 });
  });

  it('gives Info the width the chosen columns leave', () => {
    expect(columnTemplate([])).toBe('50px 52px 128px 18px 58px 96px 32px 86px 64px minmax(120px, 1fr)');
    expect(columnTemplate([2, 5, 8])).toBe('50px 128px 18px 96px 32px 64px minmax(120px, 1fr)');
  });
});
