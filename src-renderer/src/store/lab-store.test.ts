// An error banner is about the source it came from: a trace's OFFLINE does
// not survive Back to live, a live command's error does not survive a new Start.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { LabApi, LabBatch } from '@shared/lab/contract';
import { attachLab, flushBatches, useLab } from './lab-store';
import { emptyLabData } from './apply-batch';
import { snapshot } from '../test-fixtures';

let push: (b: LabBatch) => void = () => {};
let detach: () => void = () => {};

describe('error banners follow the source', () => {
  beforeEach(() => {
    // Batches are applied by flushBatches below; the scheduled frame does nothing.
    vi.stubGlobal('requestAnimationFrame', () => 0);
    vi.stubGlobal('cancelAnimationFrame', () => {});
    useLab.setState({ ...emptyLabData(), snapshot: snapshot({ startedAt: 1 }), lastError: null });
    detach = attachLab({
      command: (async () => ({ ok: true })) as LabApi['command'],
      subscribe: (l) => ((push = l), () => {}),
    });
  });
  afterEach(() => {
    detach();
    vi.unstubAllGlobals();
  });

  it('clears on a change of source and on a new session, not on a batch of the same one', () => {
    const trace = { kind: 'trace' as const, name: 'a.ndjson', duration: 9, t: 4, complete: true, marks: [] };
    push({ events: [{ type: 'view', view: trace }] });
    flushBatches();
    useLab.setState({ lastError: 'killRank: OFFLINE: a trace has no topology' });
    push({ events: [{ type: 'view', view: { ...trace, t: 5 } }] });
    flushBatches();
    expect(useLab.getState().lastError).not.toBeNull();
    push({ events: [{ type: 'view', view: { kind: 'live' } }] });
    flushBatches();
    expect(useLab.getState().lastError).toBeNull();

    useLab.setState({ lastError: 'killRank: NO_SUCH_RANK: rank 9' });
    push({ events: [{ type: 'snapshot', snapshot: snapshot({ startedAt: 1 }) }] });
    flushBatches();
    expect(useLab.getState().lastError).not.toBeNull();
    push({ events: [{ type: 'snapshot', snapshot: snapshot({ startedAt: 2 }), reset: true }] });
    flushBatches();
    expect(useLab.getState().lastError).toBeNull();
  });
});
