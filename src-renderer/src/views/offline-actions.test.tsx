// Offline (a trace or capture being viewed), the link-fault buttons are
// disabled with the reason on hover, and Export pcapng exports the opened
// trace (issue 30, item 14). Rendered to markup from the stores' state.
import { describe, it, expect, beforeEach } from 'vitest';
import { renderToStaticMarkup } from 'react-dom/server';
import type { LabView } from '@shared/lab/contract';
import { FaultControls, faultBlocker } from './FaultControls';
import { TraceButtons } from './TracesView';
import { useLab } from '../store/lab-store';
import { emptyLabData } from '../store/apply-batch';
import { links, snapshot } from '../test-fixtures';

const labInitial = { ...useLab.getInitialState() };
const setLab = (patch: Partial<ReturnType<typeof useLab.getState>>) =>
  Object.assign(useLab.getInitialState(), patch);
const trace: LabView = {
  kind: 'trace',
  name: 'x.trace.ndjson',
  duration: 10,
  t: 10,
  complete: true,
  marks: [],
};

/** The opening tags of the buttons whose text or label matches. */
const buttons = (html: string, text: RegExp) =>
  [...html.matchAll(/<button[^>]*>[^<]*/g)].map((m) => m[0]).filter((b) => text.test(b));

describe('actions offline', () => {
  beforeEach(() => Object.assign(useLab.getInitialState(), labInitial, emptyLabData()));

  it('link faults: disabled offline with the reason on hover, enabled live', () => {
    const ls = links(() => 0);
    ls[0] = { ...ls[0]!, fault: { dir: 'up', latencyMs: 50, jitterMs: 10 } };
    // A trace whose snapshot shows a running topology at its time: still a recording.
    setLab({ view: trace, snapshot: snapshot({ running: true }), links: ls });
    const html = renderToStaticMarkup(<FaultControls />);
    const faultButtons = buttons(html, /Apply fault|Clear fault|clear/);
    expect(faultButtons).toHaveLength(3);
    for (const b of faultButtons) {
      expect(b).toContain('disabled=""');
      expect(b).toContain('title="A saved trace or capture is a recording');
    }
    setLab({ view: { kind: 'live' }, snapshot: snapshot({ running: true }), links: ls });
    const live = buttons(renderToStaticMarkup(<FaultControls />), /Apply fault|Clear fault|clear/);
    for (const b of live) expect(b).not.toContain('disabled=""');
    expect(faultBlocker({ kind: 'tap', taps: 1 }, snapshot())).toMatch(/did not start/);
    expect(faultBlocker({ kind: 'live' }, snapshot({ running: false }))).toMatch(/Start one/);
    expect(faultBlocker({ kind: 'live' }, snapshot({ running: true }))).toBeNull();
  });

  it('Export pcapng is offered for an opened trace, Save trace is not', () => {
    setLab({ view: trace, snapshot: snapshot({ running: false }) });
    const html = renderToStaticMarkup(<TraceButtons />);
    const [exp] = buttons(html, /Export pcapng/);
    expect(exp).not.toContain('disabled=""');
    expect(exp).toContain('opened trace');
    expect(buttons(html, /Save trace/)[0]).toContain('disabled=""');
  });

  it("attached to a job, live or not, Save trace and Export pcapng save the job's trace", () => {
    for (const state of ['live', 'lost'] as const) {
      const view: LabView = { kind: 'attached', address: '127.0.0.1:7450', state, since: 0 };
      setLab({ view, snapshot: snapshot({ running: true }) });
      const html = renderToStaticMarkup(<TraceButtons />);
      // A link that is down is answered in words by the save (it is not greyed without a reason).
      for (const b of [...buttons(html, /Save trace/), ...buttons(html, /Export pcapng/)]) {
        expect(b).not.toContain('disabled=""');
        expect(b).toContain('attached job&#x27;s trace');
      }
    }
  });
});
