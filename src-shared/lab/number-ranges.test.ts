// The lab's one table of number ranges and its checker: what the command
// line's flags and the window's fields refuse, and in which words.
import { describe, expect, it } from 'vitest';
import { checkNumber, NUMBER_RANGES, numberInRange, rangeText } from './number-ranges';

const HOSTILE = ['NaN', '-1', '1e9', '1e308', 'Infinity', '0xdeadbeef', '', ' ', '4,2', '1_000'];

describe('number ranges', () => {
  it('refuses every malformed value in one line naming the label and the range', () => {
    for (const [name, range] of Object.entries(NUMBER_RANGES))
      for (const text of HOSTILE) {
        const r = checkNumber(range, text, `--${name}`, true);
        expect(r.ok, `${name} ${JSON.stringify(text)}`).toBe(false);
        if (r.ok) continue;
        expect(r.error.startsWith(`--${name}: `)).toBe(true);
        expect(r.error).toContain(rangeText(range));
        expect(r.error).not.toContain('\n');
      }
  });

  it('refuses one past either end, accepts both ends', () => {
    for (const range of Object.values(NUMBER_RANGES)) {
      expect(checkNumber(range, String(range.max), 'x')).toEqual({ ok: true, value: range.max });
      expect(checkNumber(range, String(range.min), 'x')).toEqual({ ok: true, value: range.min });
      expect(checkNumber(range, String(range.max + 1), 'x').ok).toBe(false);
      if (range.min > 0) expect(checkNumber(range, String(range.min - 1), 'x').ok).toBe(false);
    }
  });

  it('speaks as the window did: the same words for a flag and a field', () => {
    expect(checkNumber(NUMBER_RANGES.hosts, '40', 'Hosts')).toEqual({
      ok: false,
      error: 'Hosts: 40 is outside 1 to 16',
    });
    expect(checkNumber(NUMBER_RANGES.hosts, '1000000000', '--hosts', true)).toEqual({
      ok: false,
      error: '--hosts: 1000000000 is outside 1 to 16',
    });
    expect(checkNumber(NUMBER_RANGES.hosts, '1e9', '--hosts', true)).toEqual({
      ok: false,
      error: "--hosts: a whole number from 1 to 16, got '1e9'",
    });
    expect(checkNumber(NUMBER_RANGES.scaleMaxBytes, '100GiB', '--scale-max-bytes')).toEqual({
      ok: false,
      error: '--scale-max-bytes: 100GiB is outside 4 KiB to 512 MiB',
    });
    // A pasted megabyte of digits stays a short line.
    const long = checkNumber(NUMBER_RANGES.port, '9'.repeat(1_000_000), '--port');
    expect(!long.ok && long.error.length).toBeLessThan(100);
  });

  it('reads sizes as the flags always did', () => {
    expect(checkNumber(NUMBER_RANGES.modelBytes, '4MiB', 'm')).toEqual({ ok: true, value: 4 * 1024 ** 2 });
    expect(checkNumber(NUMBER_RANGES.modelBytes, '64 KiB', 'm')).toEqual({ ok: true, value: 64 * 1024 });
    expect(checkNumber(NUMBER_RANGES.modelBytes, '1.5k', 'm')).toEqual({ ok: true, value: 1536 });
    expect(checkNumber(NUMBER_RANGES.modelBytes, '512MiB', 'm').ok).toBe(true);
    expect(checkNumber(NUMBER_RANGES.modelBytes, '513MiB', 'm').ok).toBe(false);
  });

  it('keeps every delay inside a timer (Node turns a delay past 2^31-1 ms into 1 ms)', () => {
    for (const r of [NUMBER_RANGES.faultMs, NUMBER_RANGES.timeoutMs, NUMBER_RANGES.caseTimeoutMs])
      expect(r.max).toBeLessThan(2 ** 31 - 1);
    expect(numberInRange(NUMBER_RANGES.faultMs, 1e12, 'latency ms').ok).toBe(false);
    expect(numberInRange(NUMBER_RANGES.faultMs, NaN, 'latency ms').ok).toBe(false);
    expect(numberInRange(NUMBER_RANGES.faultMs, 2.5, 'latency ms').ok).toBe(false);
    expect(numberInRange(NUMBER_RANGES.faultMs, 250, 'latency ms')).toEqual({ ok: true, value: 250 });
  });
});
