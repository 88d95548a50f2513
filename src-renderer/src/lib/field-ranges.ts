// Links the dissector's field tree with the hex view: a field names a byte
// range, and a byte belongs to the deepest field whose range holds it.
// Paths are lists of child indices from the root ("0.2.1" as a key).

/** The part of the dissector's Field that the linking needs. */
export interface FieldLike {
  name: string;
  offset: number;
  length: number;
  value: string;
  children?: FieldLike[];
  /** The filter name and explanation key (src-shared/explain). */
  key?: string;
}

export type FieldPath = number[];

export const pathKey = (path: FieldPath): string => path.join('.');

export function fieldAt<F extends FieldLike>(fields: readonly F[], path: FieldPath): F | undefined {
  let list: readonly FieldLike[] | undefined = fields;
  let f: FieldLike | undefined;
  for (const i of path) {
    f = list?.[i];
    if (!f) return undefined;
    list = f.children;
  }
  return f as F | undefined;
}

/** The deepest field (by path) whose byte range holds `offset`, or null. */
export function fieldPathAtOffset(fields: readonly FieldLike[], offset: number): FieldPath | null {
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i];
    if (f.length > 0 && offset >= f.offset && offset < f.offset + f.length) {
      const inner = f.children ? fieldPathAtOffset(f.children, offset) : null;
      return inner ? [i, ...inner] : [i];
    }
  }
  return null;
}

/** Byte range [start, end) of the field at `path`, clipped to what was captured. */
export function byteRangeOf(
  fields: readonly FieldLike[],
  path: FieldPath,
  captured: number,
): { start: number; end: number } | null {
  const f = fieldAt(fields, path);
  if (!f) return null;
  const start = Math.min(f.offset, captured);
  const end = Math.min(f.offset + f.length, captured);
  return { start, end };
}

/** Every ancestor path of `path` (for expanding the tree to show a selected field). */
export function ancestorKeys(path: FieldPath): string[] {
  return path.map((_, i) => pathKey(path.slice(0, i + 1)));
}

export interface FlatFieldRow<F extends FieldLike = FieldLike> {
  field: F;
  path: FieldPath;
  depth: number;
  hasChildren: boolean;
}

/** The visible rows of the tree, given which paths are expanded. */
export function visibleFieldRows<F extends FieldLike>(
  fields: readonly F[],
  expanded: ReadonlySet<string>,
): FlatFieldRow<F>[] {
  const out: FlatFieldRow<F>[] = [];
  const walk = (list: readonly FieldLike[], prefix: FieldPath) => {
    list.forEach((f, i) => {
      const path = [...prefix, i];
      const hasChildren = !!f.children && f.children.length > 0;
      out.push({ field: f as F, path, depth: prefix.length, hasChildren });
      if (hasChildren && expanded.has(pathKey(path))) walk(f.children!, path);
    });
  };
  walk(fields, []);
  return out;
}

/** Hex row text helpers: 16 bytes a row, like Wireshark. */
export const BYTES_PER_ROW = 16;

/**
 * Hex digits of the offset column: as many as the last row's offset needs, at least 4 (Wireshark's
 * width for a frame under 64 KiB, the default snap length). Eight for every unit made the row about
 * 440 px, wider than the 400 px inspector of a 1024-wide window: its ASCII column scrolled sideways.
 */
export function offsetDigits(length: number): number {
  const last = Math.max(0, Math.floor((Math.max(1, length) - 1) / BYTES_PER_ROW) * BYTES_PER_ROW);
  return Math.max(4, last.toString(16).length);
}

/**
 * Bytes a hex row shows in a pane `width` px wide whose monospace characters are `ch` px: 16 where
 * the offset, 16 bytes and their ASCII fit (the row's fixed pixels: padding, gaps and each byte's
 * 1 px of click room, 46 px), else 8. The inspector is 33vw, 338 px, on a 1024-wide window: a
 * 16-byte row of about 390 px scrolled its ASCII column out of sight there.
 */
export function hexBytesPerRow(width: number, ch: number, digits: number): 8 | 16 {
  if (!(width > 0) || !(ch > 0)) return BYTES_PER_ROW;
  return width >= (digits + 3 * BYTES_PER_ROW) * ch + 46 ? BYTES_PER_ROW : 8;
}

export function hexByte(b: number): string {
  return b.toString(16).padStart(2, '0');
}

export function asciiOf(b: number): string {
  return b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.';
}

export function hexToBytes(hex: string): Uint8Array {
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) throw new Error('record bytes are not valid hex');
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}
