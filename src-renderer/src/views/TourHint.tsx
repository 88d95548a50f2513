// The first visit's "start here": one line under the toolbar pointing at the guided tour, with a
// button that opens it and a ×; gone for good once either is used (lib/tour-hint.ts).
import { useStore } from 'zustand';
import { tourHint, type TourHintState } from '../lib/tour-hint';
import type { StoreApi } from 'zustand/vanilla';
import './teach.css';

export function TourHint({ store = tourHint }: { store?: StoreApi<TourHintState> }) {
  const { show, dismiss, openTour } = useStore(store);
  if (!show) return null;
  return (
    <div className="tour-hint" role="note" aria-label="Start here">
      <span>
        {/* The tour's own button is in More ▾ unless the window is wide (1440 included): say so. */}
        New here? Start with the <strong>Guided tour</strong> (this button, or the toolbar&apos;s More ▾ menu
        later): it walks one round, record by record, from a rank&apos;s RoundFrame to the consensus.
      </span>
      <button type="button" onClick={openTour}>
        Take the tour
      </button>
      <button type="button" className="link" aria-label="Dismiss the tour hint" onClick={dismiss}>
        ×
      </button>
    </div>
  );
}
