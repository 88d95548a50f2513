// A drag handle between panels; the movement is reported, the caller sizes.
import { useRef } from 'react';

export function Splitter({
  orientation,
  label,
  onDrag,
}: {
  orientation: 'vertical' | 'horizontal';
  label: string;
  onDrag: (dx: number, dy: number) => void;
}) {
  const last = useRef<{ x: number; y: number } | null>(null);
  return (
    <div
      className={`splitter ${orientation}`}
      role="separator"
      aria-orientation={orientation}
      aria-label={label}
      onPointerDown={(e) => {
        last.current = { x: e.clientX, y: e.clientY };
        e.currentTarget.setPointerCapture(e.pointerId);
      }}
      onPointerMove={(e) => {
        if (!last.current) return;
        const dx = e.clientX - last.current.x;
        const dy = e.clientY - last.current.y;
        last.current = { x: e.clientX, y: e.clientY };
        onDrag(dx, dy);
      }}
      onPointerUp={() => (last.current = null)}
    />
  );
}
