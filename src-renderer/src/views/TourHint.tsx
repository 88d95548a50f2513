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
        {/* The tour's toolbar button is inline on a wide window, in More ▾ at 1440 wide and under. */}
        New here? Take the <strong>Guided tour</strong> (toolbar or More ▾): it walks one round, record by
        record, from a rank&apos;s RoundFrame to the consensus.
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
