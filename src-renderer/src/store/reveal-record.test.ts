// The filter is a view setting: a jump to a record sets it aside only when it
// hides that record, and it comes back when the source changes.
import { beforeEach, describe, expect, it } from 'vitest';
import { recordRing, useLab } from './lab-store';
import { emptyLabData } from './apply-batch';
import { useUi } from './ui-store';
import { filterHides, revealRecord, typeFilter } from './reveal-record';
import { record, snapshot } from '../test-fixtures';

describe('revealing a record keeps the filter', () => {
  beforeEach(() => {
    recordRing.clear();
    recordRing.push([record(1, { kind: 'HostFrame' }), record(2, { kind: 'Broadcast', dir: 'down' })]);
    useLab.setState({ ...emptyLabData(), snapshot: snapshot({ startedAt: 1 }) });
    useUi.getState().set({ filterText: 'kind == HostFrame', suspendedFilter: null, selectedSeq: null });
  });

  it('a record the filter shows is revealed with the filter untouched', () => {
    expect(filterHides('kind == HostFrame', recordRing.findBySeq(1))).toBe(false);
    revealRecord(1);
    expect(useUi.getState()).toMatchObject({
      selectedSeq: 1,
      filterText: 'kind == HostFrame',
      suspendedFilter: null,
    });
  });

  it('a hidden record sets the filter aside; it is back after a trace and Back to live', () => {
    revealRecord(2);
    expect(useUi.getState()).toMatchObject({
      selectedSeq: 2,
      filterText: '',
      suspendedFilter: 'kind == HostFrame',
    });
    const trace = { kind: 'trace' as const, name: 'a.ndjson', duration: 9, t: 4, complete: true, marks: [] };
    useLab.setState({ view: trace });
    expect(useUi.getState()).toMatchObject({ filterText: 'kind == HostFrame', suspendedFilter: null });
    useLab.setState({ view: { kind: 'live' } });
    expect(useUi.getState().filterText).toBe('kind == HostFrame');
  });

  it('typing a new filter drops the one set aside', () => {
    revealRecord(2);
    typeFilter('kind == Broadcast');
    useLab.setState({ snapshot: snapshot({ startedAt: 2 }) });
    expect(useUi.getState()).toMatchObject({ filterText: 'kind == Broadcast', suspendedFilter: null });
  });
});
