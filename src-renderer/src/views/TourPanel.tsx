// The guided tour (region `Tour`): one real round of the running session in
// steps, each selecting its record in the list and the inspector. Next/Back,
// the arrow keys, Escape to leave; the step is kept, so it resumes.
import { useEffect, useState } from 'react';
import type { UnitRecord } from '@shared/lab/records';
import { recordRing } from '../store/lab-store';
import { useUi } from '../store/ui-store';
import { tourSteps, type TourStep } from '../lib/tour-steps';
import { jumpToRecord } from './FindingsView';
import { useTeach } from '../store/teach-store';
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

export function TourPanel() {
  const open = useTeach((s) => s.tourOpen);
  const index = useTeach((s) => s.tourStep);
  const [steps, setSteps] = useState<TourStep[]>([]);
  // Build from the records when opened; until a round is complete, look again each second.
  useEffect(() => {
    if (!open) return;
    setSteps(snapshotSteps());
    const timer = setInterval(() => setSteps((s) => (s.length ? s : snapshotSteps())), 1000);
    return () => clearInterval(timer);
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
      role="region"
      aria-label="Tour"
      className="tour-panel"
      tabIndex={-1}
      onKeyDown={(e) => {
        if (e.key === 'ArrowRight') go(index + 1);
        else if (e.key === 'ArrowLeft') go(index - 1);
        else if (e.key === 'Escape') useTeach.setState({ tourOpen: false });
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
        <button type="button" onClick={() => setSteps(snapshotSteps())}>
          Use the latest round
        </button>
        <button type="button" onClick={() => useTeach.setState({ tourOpen: false })}>
          Leave tour
        </button>
      </div>
    </section>
  );
}
