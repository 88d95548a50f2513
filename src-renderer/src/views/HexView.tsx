// The inspector's hex + ASCII pane: the selected field's bytes highlighted,
// a MAC's covered bytes shaded, a byte a lab fault flipped marked; a click
// on a byte selects its field, and the arrow keys step field by field and
// row by row.
import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import type { RecordDissection } from '../lib/dissect-record';
import {
  asciiOf,
  byteRangeOf,
  hexBytesPerRow,
  offsetDigits,
  fieldPathAtOffset,
  hexByte,
  type FieldPath,
} from '../lib/field-ranges';
import type { ByteRange } from '@shared/explain/mac-coverage';
import { hexKeyOffset } from '../lib/pane-keys';

export function HexView({
  bytes,
  fields,
  selected,
  onSelect,
  covered,
  flipped,
}: {
  /** The byte a lab fault flipped in this unit: marked. */
  flipped?: number;
  bytes: Uint8Array | null;
  fields: RecordDissection['fields'];
  selected: FieldPath | null;
  onSelect: (p: FieldPath | null) => void;
  /** Bytes a selected MAC covers, shaded in a second colour. */
  covered: ByteRange[];
}) {
  const digits = offsetDigits(bytes?.length ?? 0);
  const scrollRef = useRef<HTMLDivElement>(null);
  // 16 bytes a row where they fit with their ASCII, else 8 (lib/field-ranges.ts hexBytesPerRow),
  // measured from the pane's width and its offset column's characters.
  const [perRow, setPerRow] = useState<8 | 16>(16);
  useLayoutEffect(() => {
    const el = scrollRef.current;
    if (!el) return;
    const fit = () => {
      const off = el.querySelector('.hex-off');
      const chars = off?.textContent?.length ?? 0;
      if (!off || chars === 0) return;
      setPerRow(hexBytesPerRow(el.clientWidth, off.getBoundingClientRect().width / chars, digits));
    };
    fit();
    const ro = new ResizeObserver(fit);
    ro.observe(el);
    return () => ro.disconnect();
  }, [digits, bytes !== null]);
  const rowsCount = bytes ? Math.ceil(bytes.length / perRow) : 0;
  const range = bytes && selected ? byteRangeOf(fields, selected, bytes.length) : null;
  const virtualizer = useVirtualizer({
    count: rowsCount,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => 18,
    overscan: 8,
  });
  useEffect(() => {
    if (range && range.end > range.start)
      virtualizer.scrollToIndex(Math.floor(range.start / perRow), { align: 'auto' });
  }, [range?.start, range?.end, virtualizer, perRow]);
  // A flipped byte is scrolled into view when the unit opens.
  useEffect(() => {
    if (flipped !== undefined && bytes && flipped < bytes.length)
      virtualizer.scrollToIndex(Math.floor(flipped / perRow), { align: 'center' });
  }, [flipped, bytes?.length, virtualizer]);

  const inRange = (i: number) => range !== null && i >= range.start && i < range.end;
  const inCovered = (i: number) => covered.some((c) => i >= c.start && i < c.end);
  const clickByte = (i: number) => onSelect(fieldPathAtOffset(fields, i));

  return (
    <section
      aria-label="Bytes"
      className="hex"
      ref={scrollRef}
      tabIndex={0}
      title="← → the previous or next field's bytes, ↑ ↓ a row up or down"
      onKeyDown={(e) => {
        if (!bytes) return;
        const at = hexKeyOffset(range, bytes.length, e.key, perRow);
        if (at === null) return;
        e.preventDefault();
        clickByte(at);
      }}
    >
      {!bytes ? null : (
        <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
          {virtualizer.getVirtualItems().map((item) => {
            const base = item.index * perRow;
            const slice = bytes.subarray(base, base + perRow);
            return (
              <div
                key={item.index}
                className="hex-row mono"
                style={{ transform: `translateY(${item.start}px)` }}
              >
                <span className="hex-off">{base.toString(16).padStart(digits, '0')}</span>
                <span className="hex-bytes">
                  {Array.from(slice, (b, j) => (
                    <span
                      key={j}
                      data-offset={base + j}
                      className={`hb ${inRange(base + j) ? 'hl' : inCovered(base + j) ? 'hl2' : ''} ${j === 8 ? 'gap' : ''} ${base + j === flipped ? 'flip' : ''}`}
                      title={base + j === flipped ? 'the byte the lab flipped' : undefined}
                      onClick={() => clickByte(base + j)}
                    >
                      {hexByte(b)}
                    </span>
                  ))}
                </span>
                <span className="hex-ascii">
                  {Array.from(slice, (b, j) => (
                    <span
                      key={j}
                      data-offset={base + j}
                      className={`ha ${inRange(base + j) ? 'hl' : inCovered(base + j) ? 'hl2' : ''} ${base + j === flipped ? 'flip' : ''}`}
                      onClick={() => clickByte(base + j)}
                    >
                      {asciiOf(b)}
                    </span>
                  ))}
                </span>
              </div>
            );
          })}
        </div>
      )}
    </section>
  );
}
