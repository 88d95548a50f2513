// What the arrow keys do in the inspector's field tree and hex pane (the
// WAI-ARIA tree pattern, and byte-wise moves in the hex view), and in the
// ladder. Pure, so the views stay thin and the moves are tested.
import { BYTES_PER_ROW } from './field-ranges';

export interface TreeRowKey {
  key: string;
  depth: number;
  hasChildren: boolean;
}

/** The row to select and/or the row to open or close for a key, or null when the key is not the tree's. */
export function treeKeyMove(
  rows: readonly TreeRowKey[],
  selectedKey: string | null,
  expanded: ReadonlySet<string>,
  key: string,
): { select?: number; toggle?: string } | null {
  if (rows.length === 0) return null;
  const i = selectedKey === null ? -1 : rows.findIndex((r) => r.key === selectedKey);
  const row = i >= 0 ? rows[i] : undefined;
  switch (key) {
    case 'ArrowDown':
      return { select: Math.min(rows.length - 1, i + 1) };
    case 'ArrowUp':
      return { select: Math.max(0, i - 1) };
    case 'Home':
      return { select: 0 };
    case 'End':
      return { select: rows.length - 1 };
    case 'ArrowRight':
      if (!row) return { select: 0 };
      if (row.hasChildren && !expanded.has(row.key)) return { toggle: row.key };
      // Open already: go to its first child.
      return row.hasChildren && i + 1 < rows.length ? { select: i + 1 } : null;
    case 'ArrowLeft': {
      if (!row) return null;
      if (row.hasChildren && expanded.has(row.key)) return { toggle: row.key };
      // Closed or a leaf: go to the parent (the nearest row above with a smaller depth).
      for (let j = i - 1; j >= 0; j--) if (rows[j].depth < row.depth) return { select: j };
      return null;
    }
    case 'Enter':
    case ' ':
      return row?.hasChildren ? { toggle: row.key } : null;
    default:
      return null;
  }
}

/**
 * The byte offset a key moves the hex pane's selection to, or null. `range`: the selected field's
 * bytes; `row`: the bytes a row shows (16, or 8 in a narrow pane).
 */
export function hexKeyOffset(
  range: { start: number; end: number } | null,
  length: number,
  key: string,
  row: number = BYTES_PER_ROW,
): number | null {
  if (length === 0) return null;
  const start = range?.start ?? -1;
  const end = range ? Math.max(range.end, range.start + 1) : 0;
  let at: number;
  switch (key) {
    case 'ArrowRight':
      at = end;
      break;
    case 'ArrowLeft':
      at = start - 1;
      break;
    case 'ArrowDown':
      at = start < 0 ? 0 : start + row;
      break;
    case 'ArrowUp':
      at = start - row;
      break;
    case 'Home':
      at = 0;
      break;
    case 'End':
      at = length - 1;
      break;
    default:
      return null;
  }
  return Math.max(0, Math.min(length - 1, at));
}

/** The ladder arrow (record seq) a key moves to, or null: ↓ ↑ next/previous, Home/End first/last. */
export function ladderKeySeq(seqs: readonly number[], selected: number | null, key: string): number | null {
  if (seqs.length === 0) return null;
  const i = selected === null ? -1 : seqs.indexOf(selected);
  switch (key) {
    case 'ArrowDown':
    case 'ArrowRight':
      return seqs[Math.min(seqs.length - 1, i + 1)];
    case 'ArrowUp':
    case 'ArrowLeft':
      return seqs[i < 0 ? seqs.length - 1 : Math.max(0, i - 1)];
    case 'Home':
      return seqs[0];
    case 'End':
      return seqs[seqs.length - 1];
    default:
      return null;
  }
}
