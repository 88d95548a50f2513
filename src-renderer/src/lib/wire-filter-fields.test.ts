// The dissector's filter names in the records filter, their completion, and
// "Apply as filter" text.
import { describe, expect, it } from 'vitest';
import { FIELD_EXPLANATIONS } from '@shared/explain/field-explanations';
import { FILTER_FIELDS, compileFilter } from './filter-language';
import { WIRE_FILTER_FIELDS, filterCompletions, filterForField } from './wire-filter-fields';
import { record } from '../test-fixtures';

const recs = [
  record(1, { kind: 'HostFrame', layer: 'mux', summary: 'HostFrame 4 tensors w=4', length: 125 }),
  record(2, { kind: 'Broadcast', layer: 'mux', dir: 'down', summary: 'Broadcast consensus w=0' }),
  record(3, { kind: 'Hello', layer: 'mux', summary: 'Hello host=h0 ranks=[0,1]' }),
  record(4, { kind: 'Data', layer: 'mux', rank: 3, summary: 'Timing Heartbeat from rank 3' }),
  record(5, { kind: 'RoundFrame', layer: 'lenframe', rank: 1, summary: 'RoundFrame w=2', length: 104 }),
  record(6, { kind: 'Data', layer: 'mux', rank: 2, summary: 'StartEpoch to rank 2' }),
];
const match = (text: string) => recs.filter(compileFilter(text)).map((r) => r.seq);

describe('filter names of the dissector', () => {
  it('are names the explanations table defines', () => {
    const keys = FIELD_EXPLANATIONS.map((x) => x.key);
    for (const name of Object.keys(WIRE_FILTER_FIELDS)) expect(keys).toContain(name);
  });

  it('select records by what the inspector shows', () => {
    expect(match('mux.kind == HostFrame')).toEqual([1]);
    expect(match('mux.kind == Control')).toEqual([3]);
    expect(match('relay.msg == Hello')).toEqual([3]);
    expect(match('rf.weight > 0')).toEqual([1, 5]);
    expect(match('rf.weight == 0')).toEqual([2]);
    expect(match('ctl.msg == Heartbeat')).toEqual([4]);
    expect(match('ctl.msg == StartEpoch && mux.rank == 2')).toEqual([6]);
    expect(match('mux.payload_len == 100')).toEqual([1]);
    expect(match('len.len == 100')).toEqual([5]);
    expect(() => compileFilter('rf.weight > heavy')).toThrow(/takes a number/);
  });

  it('complete names and values', () => {
    expect(filterCompletions('mux.k', FILTER_FIELDS)).toEqual(['mux.kind']);
    expect(filterCompletions('rf.', FILTER_FIELDS)).toEqual(['rf.weight']);
    expect(filterCompletions('mux.kind == ', FILTER_FIELDS)).toEqual([
      'Broadcast',
      'Control',
      'Data',
      'HostFrame',
    ]);
    expect(filterCompletions('ctl.msg == Heart', FILTER_FIELDS)).toEqual(['Heartbeat']);
    expect(filterCompletions('', FILTER_FIELDS)).toEqual([]);
    expect(filterCompletions('mux.kind == HostFrame', FILTER_FIELDS)).toEqual([]);
  });

  it('"Apply as filter" turns a field row into a filter that parses', () => {
    expect(filterForField('mux.kind', '3 (HostFrame)')).toBe('mux.kind == HostFrame');
    expect(filterForField('ctl.msg', '4 (Heartbeat, TimingMsgWire table v2)')).toBe('ctl.msg == Heartbeat');
    expect(filterForField('relay.msg', '{"type":"Hello","host":"h0"}')).toBe('relay.msg == Hello');
    expect(filterForField('rf.weight', '4')).toBe('rf.weight == 4');
    expect(filterForField('mux.auth_tag', 'a1b2')).toBe('mux.auth_tag');
    for (const t of ['mux.kind == HostFrame', 'ctl.msg == Heartbeat', 'rf.weight == 4'])
      expect(() => compileFilter(t)).not.toThrow();
  });
});
