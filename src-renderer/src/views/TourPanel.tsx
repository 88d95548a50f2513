// The guided tour (region `Tour`): one real round of the running session in
// steps, each selecting its record in the list and the inspector. Next/Back,
// the arrow keys, Escape to leave. Leaving gives back the display and the
// filter as they were; a reopened tour starts at step 1 and offers the step it was left at.
import { useEffect, useRef, useState } from 'react';
import type { UnitRecord } from '@shared/lab/records';
import { recordRing } from '../store/lab-store';
import { useUi } from '../store/ui-store';
import { tourSteps, type TourStep } from '../lib/tour-steps';
import { jumpToRecord } from './FindingsView';
import { useTeach } from '../store/teach-store';
import { useLayer } from './dialog-layers';
import './teach.css';

function snapshotSteps(): TourStep[] {
  const all: UnitRecord[] = [];
  recordRing.forEach((r) => all.push(r));
  return tourSteps(all);
}

export function TourButton() {
  return (
    <button type="button" onClick={() => useTeach.setState({ tourOpen: true })}>
      Guided tour
    </button>
  );
}

/** What the tour changes in the window, as it was when the tour opened: leaving gives it back. */
interface Before {
  displayPaused: boolean;
  filterText: string;
  suspendedFilter: string | null;
}

function leaveTour(): void {
  useTeach.setState({ tourOpen: false });
}

export function TourPanel() {
  const open = useTeach((s) => s.tourOpen);
  const index = useTeach((s) => s.tourStep);
  const [steps, setSteps] = useState<TourStep[]>([]);
  // Where the last visit was left (offered, not imposed: a reopened tour starts at step 1).
  const [leftAt, setLeftAt] = useState(0);
  const ref = useRef<HTMLElement>(null);
  useLayer(ref, open, leaveTour, false);
  // Build from the records when opened; until a round is complete, look again each second.
  useEffect(() => {
    if (!open) return;
    setSteps(snapshotSteps());
    const timer = setInterval(() => setSteps((s) => (s.length ? s : snapshotSteps())), 1000);
    return () => clearInterval(timer);
  }, [open]);
  // The tour pauses the display and may set the filter aside to show its units; leaving (the
  // button, Escape) gives both back as they were, and the next visit starts at step 1.
  useEffect(() => {
    if (!open) return;
    const ui = useUi.getState();
    const before: Before = {
      displayPaused: ui.displayPaused,
      filterText: ui.filterText,
      suspendedFilter: ui.suspendedFilter,
    };
    setLeftAt(useTeach.getState().tourStep);
    useTeach.setState({ tourStep: 0 });
    return () => {
      const now = useUi.getState();
      // A filter the person typed during the tour is theirs: only the one the tour set aside comes back.
      const filter =
        now.suspendedFilter !== null && now.suspendedFilter === before.filterText
          ? { filterText: before.filterText, suspendedFilter: before.suspendedFilter }
          : {};
      now.set({ displayPaused: before.displayPaused, ...filter });
    };
  }, [open]);
  const step = steps[Math.min(index, steps.length - 1)];
  useEffect(() => {
    if (!open || !step) return;
    jumpToRecord(step.seq);
    useUi.getState().set({ displayPaused: true, selectedField: step.field ?? null });
  }, [open, step]);
  if (!open) return null;
  const go = (i: number) => useTeach.setState({ tourStep: Math.max(0, Math.min(steps.length - 1, i)) });
  return (
    <section
      ref={ref}
      role="region"
      aria-label="Tour"
      className="tour-panel"
      tabIndex={-1}
      onKeyDown={(e) => {
        if (e.key === 'ArrowRight') go(index + 1);
        else if (e.key === 'ArrowLeft') go(index - 1);
      }}
    >
      {!step ? (
        <p>
          Waiting for a complete round (a Broadcast) in the records… Start the session, then reopen the tour.
        </p>
      ) : (
        <>
          <h2>
            Step {Math.min(index, steps.length - 1) + 1} of {steps.length}: {step.title}
          </h2>
          <p>{step.text}</p>
          <p className="muted small">Record #{step.seq} is selected in the list and the inspector.</p>
        </>
      )}
      <div className="tour-buttons">
        <button type="button" disabled={index <= 0} onClick={() => go(index - 1)}>
          Back
        </button>
        <button type="button" disabled={!step || index >= steps.length - 1} onClick={() => go(index + 1)}>
          Next
        </button>
        {leftAt > 0 && index === 0 && step && (
          <button type="button" onClick={() => go(leftAt)}>
            Resume at step {Math.min(leftAt, steps.length - 1) + 1}
          </button>
        )}
        <button type="button" onClick={() => setSteps(snapshotSteps())}>
          Use the latest round
        </button>
        <button type="button" onClick={leaveTour}>
          Leave tour
        </button>
      </div>
    </section>
  );
}
