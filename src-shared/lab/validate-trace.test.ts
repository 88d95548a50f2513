// The trace commands as they arrive from IPC or the WebSocket: well-formed
// ones rebuilt, malformed ones named.
import { describe, expect, it } from 'vitest';
import { LabCommandError, validateLabCommand } from './validate';

const bad = (v: unknown, message: RegExp) => {
  expect(() => validateLabCommand(v)).toThrow(LabCommandError);
  expect(() => validateLabCommand(v)).toThrow(message);
};

describe('trace commands', () => {
  it('accepts the well-formed ones', () => {
    expect(validateLabCommand({ type: 'saveTrace', format: 'pcapng' })).toEqual({
      type: 'saveTrace',
      format: 'pcapng',
    });
    expect(validateLabCommand({ type: 'listTraces' })).toEqual({ type: 'listTraces' });
    expect(validateLabCommand({ type: 'openTrace' })).toEqual({ type: 'openTrace' });
    expect(validateLabCommand({ type: 'openTrace', name: 'relay-lab-20260102-030405.trace.ndjson' })).toEqual(
      {
        type: 'openTrace',
        name: 'relay-lab-20260102-030405.trace.ndjson',
      },
    );
    expect(validateLabCommand({ type: 'seekTrace', t: 12.5 })).toEqual({ type: 'seekTrace', t: 12.5 });
    expect(validateLabCommand({ type: 'closeTrace' })).toEqual({ type: 'closeTrace' });
    expect(validateLabCommand({ type: 'recentRecords' })).toEqual({ type: 'recentRecords' });
    expect(validateLabCommand({ type: 'recentRecords', limit: 100 })).toEqual({
      type: 'recentRecords',
      limit: 100,
    });
  });

  it('names what is wrong', () => {
    bad({ type: 'saveTrace' }, /saveTrace.format must be one of ndjson, pcapng/);
    bad({ type: 'saveTrace', format: 'pcap' }, /saveTrace.format/);
    bad({ type: 'saveTrace', format: 'ndjson', path: '/etc/passwd' }, /unknown field 'path'/);
    bad({ type: 'openTrace', name: '../secret.ndjson' }, /openTrace.name must be a file name/);
    bad({ type: 'openTrace', name: '.hidden.ndjson' }, /openTrace.name/);
    bad({ type: 'openTrace', name: 'a/b.ndjson' }, /openTrace.name/);
    bad({ type: 'openTrace', name: 'notes.txt' }, /openTrace.name/);
    bad({ type: 'openTrace', name: 7 }, /openTrace.name/);
    bad({ type: 'seekTrace' }, /seekTrace.t must be a finite number/);
    bad({ type: 'seekTrace', t: -1 }, /seekTrace.t/);
    bad({ type: 'seekTrace', t: Infinity }, /seekTrace.t/);
    bad({ type: 'seekTrace', t: '5' }, /seekTrace.t/);
    bad({ type: 'closeTrace', now: true }, /unknown field 'now'/);
    bad({ type: 'recentRecords', limit: 0 }, /recentRecords.limit must be between 1 and/);
    bad({ type: 'recentRecords', limit: 1e9 }, /recentRecords.limit/);
    bad({ type: 'recentRecords', limit: 1.5 }, /recentRecords.limit must be an integer/);
  });
});
