// A drag handle between panels; the movement is reported, the caller sizes.
// From the keyboard (it is in the tab order, with a visible focus): the
// arrow keys move it 16 px (Shift: 64 px), Enter collapses or restores the
// pane it sizes.
import { useRef } from 'react';

export const SPLITTER_STEP_PX = 16;

/** The movement an arrow key asks of a splitter, or null for a key it does not use. */
export function splitterKeyStep(
  orientation: 'vertical' | 'horizontal',
  key: string,
  shift: boolean,
): { dx: number; dy: number } | null {
  const step = shift ? SPLITTER_STEP_PX * 4 : SPLITTER_STEP_PX;
  if (orientation === 'vertical') {
    if (key === 'ArrowLeft') return { dx: -step, dy: 0 };
    if (key === 'ArrowRight') return { dx: step, dy: 0 };
  } else {
    if (key === 'ArrowUp') return { dx: 0, dy: -step };
    if (key === 'ArrowDown') return { dx: 0, dy: step };
  }
  return null;
}

export function Splitter({
  orientation,
  label,
  onDrag,
  value,
  onToggle,
  collapsed = false,
}: {
  orientation: 'vertical' | 'horizontal';
  label: string;
  onDrag: (dx: number, dy: number) => void;
  /** The size in px of the pane it sizes (announced to assistive technology). */
  value?: number;
  /** Collapse or restore the pane (Enter, or a double click). */
  onToggle?: () => void;
  collapsed?: boolean;
}) {
  const last = useRef<{ x: number; y: number } | null>(null);
  return (
    <div
      className={`splitter ${orientation} ${collapsed ? 'collapsed' : ''}`}
      role="separator"
      tabIndex={0}
      aria-orientation={orientation}
      aria-label={label}
      aria-valuenow={collapsed ? 0 : value}
      title={`${label}: drag, or focus and use the arrow keys${onToggle ? '; Enter or double click collapses or restores' : ''}`}
      onPointerDown={(e) => {
        last.current = { x: e.clientX, y: e.clientY };
        e.currentTarget.setPointerCapture(e.pointerId);
      }}
      onPointerMove={(e) => {
        if (!last.current || collapsed) return;
        const dx = e.clientX - last.current.x;
        const dy = e.clientY - last.current.y;
        last.current = { x: e.clientX, y: e.clientY };
        onDrag(dx, dy);
      }}
      onPointerUp={() => (last.current = null)}
      onDoubleClick={() => onToggle?.()}
      onKeyDown={(e) => {
        if (e.key === 'Enter' && onToggle) {
          e.preventDefault();
          onToggle();
          return;
        }
        const step = splitterKeyStep(orientation, e.key, e.shiftKey);
        if (!step || collapsed) return;
        e.preventDefault();
        onDrag(step.dx, step.dy);
      }}
    />
  );
}
