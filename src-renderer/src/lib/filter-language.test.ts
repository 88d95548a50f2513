import { describe, it, expect } from 'vitest';
import { compileFilter, tryCompileFilter, FilterError } from './filter-language';
import { record } from '../test-fixtures';

const recs = [
  record(1, { kind: 'HostFrame', host: 1, rank: undefined, verdict: 'ok' }),
  record(2, { kind: 'HostFrame', host: 0, verdict: 'ok' }),
  record(3, { kind: 'RoundFrame', host: 1, rank: 3, link: 'h1.r3.data', layer: 'lenframe', verdict: 'ok' }),
  record(4, { kind: 'Data', host: 0, rank: 3, verdict: 'HMAC_MISMATCH', length: 5000, captured: 100 }),
  record(5, { kind: 'Broadcast', host: 1, dir: 'down', summary: 'Broadcast r=7 8 tensors' }),
];
const match = (text: string) => recs.filter(compileFilter(text)).map((r) => r.seq);

describe('filter language', () => {
  it('runs the examples of the issue', () => {
    expect(match('kind == HostFrame && host == h1')).toEqual([1]);
    expect(match('rank == 3')).toEqual([3, 4]);
    expect(match('verdict != ok')).toEqual([4]);
  });

  it('matches everything when empty', () => {
    expect(match('')).toEqual([1, 2, 3, 4, 5]);
    expect(match('   ')).toEqual([1, 2, 3, 4, 5]);
  });

  it('knows and/or/not, parentheses, comparisons, contains, and word forms', () => {
    expect(match('host == 1 and not kind == HostFrame')).toEqual([3, 5]);
    expect(match('(kind == Data || kind == Broadcast) && host == h1')).toEqual([5]);
    expect(match('len > 1000')).toEqual([4]);
    expect(match('len <= 100 and dir == down')).toEqual([5]);
    expect(match('summary contains "r=7"')).toEqual([5]);
    expect(match('short')).toEqual([4]);
    expect(match('!short && rank')).toEqual([3]);
    expect(match('kind == hostframe')).toEqual([1, 2]);
    expect(match('rank != 3')).toEqual([1, 2, 5]);
    expect(match("link == 'h1.r3.data'")).toEqual([3]);
  });

  it.each([
    ['kind ==', 'expected a value', 7],
    ['knd == HostFrame', "unknown field 'knd'", 0],
    ['rank == three', "'rank' takes a number", 8],
    ['kind = HostFrame', "use '=='", 5],
    ['(rank == 3', "expected ')'", 10],
    ['rank == 3 )', "unexpected ')'", 10],
    ['kind < 4', "'<' needs a number field", 5],
    ['rank contains 3', "'contains' needs a text field", 5],
    ['summary == "open', 'unterminated string', 11],
    ['&& rank == 1', 'expected a field name', 0],
    ['rank == 1 &&', 'expected a field name', 12],
    ['rank # 1', "unexpected character '#'", 5],
  ])('reports %j as an error with its position', (text, message, at) => {
    const r = tryCompileFilter(text);
    expect(r.filter).toBeNull();
    expect(r.error).toBeInstanceOf(FilterError);
    expect(r.error!.message).toContain(message);
    expect(r.error!.at).toBe(at);
  });
});
