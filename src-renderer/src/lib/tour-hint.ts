// "Start here" for a first visit: a one-line hint pointing at the guided tour, shown until the
// person dismisses it or opens the tour (by the hint or the toolbar's button), then remembered
// in localStorage so it never comes back.
import { createStore, type StoreApi } from 'zustand/vanilla';
import { useTeach } from '../store/teach-store';

export const TOUR_HINT_KEY = 'relay-lab.tour-hint-seen';

type Storage = Pick<globalThis.Storage, 'getItem' | 'setItem'>;

export interface TourHintState {
  show: boolean;
  dismiss: () => void;
  openTour: () => void;
}

export function createTourHint(storage: Storage | null): StoreApi<TourHintState> {
  let seen = false;
  try {
    seen = storage?.getItem(TOUR_HINT_KEY) === '1';
  } catch {
    // Storage refused (a locked-down profile): show the hint; dismissing it still hides it now.
  }
  const store = createStore<TourHintState>((set) => ({
    show: !seen,
    dismiss: () => {
      try {
        storage?.setItem(TOUR_HINT_KEY, '1');
      } catch {
        // Not remembered across launches, hidden for this one.
      }
      set({ show: false });
    },
    openTour: () => {
      useTeach.setState({ tourOpen: true });
      store.getState().dismiss();
    },
  }));
  // Opened from the toolbar's button counts too.
  const unsubscribe = useTeach.subscribe((s) => {
    if (!s.tourOpen || !store.getState().show) return;
    store.getState().dismiss();
    unsubscribe();
  });
  return store;
}

/** The window's hint, read from this profile's localStorage. */
export const tourHint = createTourHint(typeof localStorage === 'undefined' ? null : localStorage);
