import { describe, it, expect } from 'vitest';
import { validateLabCommand, LabCommandError, badCommandReply } from './validate';

describe('validateLabCommand', () => {
  it('accepts every well-formed command and returns a fresh copy', () => {
    const cmds = [
      { type: 'start' },
      {
        type: 'start',
        config: { ranksPerHost: [2, 3], modelBytes: 4096, mode: 'direct', policy: 'strict', dtype: 'bf16' },
      },
      { type: 'stop' },
      { type: 'killRank', rank: 3 },
      { type: 'pauseRank', rank: 0 },
      { type: 'resumeRank', rank: 7 },
      { type: 'killHost', host: 1 },
      { type: 'pauseRounds' },
      { type: 'resumeRounds' },
      { type: 'stepRound' },
      { type: 'setSpeed', roundIntervalMs: 100 },
      { type: 'compareModes', rounds: 3, config: { modelBytes: 1024 } },
      { type: 'getRecordBytes', seq: 42 },
      { type: 'snapshot' },
      {
        type: 'setLinkFault',
        link: 'h0.uplink.data',
        fault: { dir: 'up', latencyMs: 20, jitterMs: 5, sliceBytes: 7, sliceGapMs: 1 },
      },
      {
        type: 'setLinkFault',
        link: 'h1.r4.control',
        fault: {
          dir: 'both',
          corruptNext: true,
          reset: false,
          blackhole: true,
          bandwidth: 1000,
          stallMs: 300,
        },
      },
      { type: 'setLinkFault', link: 'h0.uplink.data', fault: null },
      { type: 'listScenarios' },
      { type: 'runScenario', name: 'mid-frame-desync' },
      { type: 'reproRecord', on: true },
      { type: 'reproRecord' },
      { type: 'draftRepro' },
      { type: 'saveRepro', text: '{"format":"relay-lab-repro"}' },
      { type: 'runRepro', text: '{}' },
    ];
    for (const c of cmds) {
      const out = validateLabCommand(c);
      expect(out).toEqual(c);
      expect(out).not.toBe(c);
    }
  });

  it.each([
    [null, 'command must be an object'],
    ['killRank', 'command must be an object'],
    [[], 'command must be an object'],
    [{}, 'command.type must be one of'],
    [{ type: 'rmrf' }, 'command.type must be one of'],
    [{ type: 'killRank' }, 'killRank.rank must be an integer'],
    [{ type: 'killRank', rank: '3' }, 'killRank.rank must be an integer'],
    [{ type: 'killRank', rank: 1.5 }, 'killRank.rank must be an integer'],
    [{ type: 'killRank', rank: -1 }, 'killRank.rank must be between'],
    [{ type: 'stop', extra: 1 }, "unknown field 'extra'"],
    [{ type: 'start', config: [] }, 'config must be an object'],
    [{ type: 'start', config: { ranksPerHost: [] } }, 'ranksPerHost must be an array'],
    [{ type: 'start', config: { ranksPerHost: [4, 0] } }, 'ranksPerHost[1] must be between'],
    [{ type: 'start', config: { modelBytes: 6 } }, 'multiple of 4'],
    [{ type: 'start', config: { modelBytes: 2 ** 40 } }, 'modelBytes must be between'],
    [{ type: 'start', config: { modelBytes: 1024 * 1024 * 1024 } }, 'modelBytes must be between'],
    [{ type: 'start', config: { ranksPerHost: Array(16).fill(32) } }, 'at most 64 ranks in all'],
    [{ type: 'compareModes', config: { ranksPerHost: [32, 32, 1] } }, 'at most 64 ranks in all'],
    [{ type: 'start', config: { mode: 'teleport' } }, 'config.mode must be one of'],
    [{ type: 'start', config: { saltHex: 'XYZ' } }, 'saltHex'],
    [{ type: 'start', config: { __proto__: { polluted: true }, mode: 'fold' } }, 'config must be an object'],
    [{ type: 'setSpeed', roundIntervalMs: 1e9 }, 'roundIntervalMs must be between'],
    [{ type: 'compareModes', rounds: 0 }, 'compareModes.rounds must be between'],
    [{ type: 'runScenario' }, 'runScenario.name must be a scenario name'],
    [{ type: 'runScenario', name: '../../etc/passwd' }, 'runScenario.name must be a scenario name'],
    [{ type: 'listScenarios', name: 'x' }, "unknown field 'name'"],
    [{ type: 'reproRecord', on: 'yes' }, 'reproRecord.on must be true or false'],
    [{ type: 'runRepro', text: 7 }, "runRepro.text must be a reproduction file's JSON text"],
    [{ type: 'saveRepro', text: 'x'.repeat(2 * 1024 * 1024) }, 'at most'],
    [{ type: 'setLinkFault', link: 'h0.uplink.data' }, 'setLinkFault.fault must be a fault object or null'],
    [{ type: 'setLinkFault', link: '../etc', fault: null }, 'setLinkFault.link must be a link id'],
    [
      { type: 'setLinkFault', link: 'h0.uplink.data', fault: { latencyMs: 5 } },
      'setLinkFault.fault.dir must be one of',
    ],
    [
      { type: 'setLinkFault', link: 'h0.uplink.data', fault: { dir: 'up', latencyMs: -1 } },
      'latencyMs must be between',
    ],
    [
      { type: 'setLinkFault', link: 'h0.uplink.data', fault: { dir: 'up', reset: 'yes' } },
      'reset must be true or false',
    ],
    [
      { type: 'setLinkFault', link: 'h0.uplink.data', fault: { dir: 'up', explode: true } },
      "unknown field 'explode'",
    ],
  ])('rejects %j with a named error', (input, message) => {
    let caught: unknown;
    try {
      validateLabCommand(input);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(LabCommandError);
    expect((caught as LabCommandError).code).toBe('BAD_COMMAND');
    expect((caught as Error).message).toContain(message);
    expect(badCommandReply(caught)).toEqual({
      ok: false,
      error: 'BAD_COMMAND',
      message: (caught as Error).message,
    });
  });

  it('rejects an object parsed from hostile JSON with a __proto__ key', () => {
    const hostile = JSON.parse('{"type":"stop","__proto__":{"x":1}}');
    expect(() => validateLabCommand(hostile)).toThrow(LabCommandError);
  });
});

describe('earlierRecords (issue 30, item 2)', () => {
  it('takes a seq and an optional page size of at most 2,000, and names a wrong field', () => {
    expect(validateLabCommand({ type: 'earlierRecords', before: 120 })).toEqual({
      type: 'earlierRecords',
      before: 120,
    });
    expect(validateLabCommand({ type: 'earlierRecords', before: 0, limit: 2000 })).toEqual({
      type: 'earlierRecords',
      before: 0,
      limit: 2000,
    });
    for (const bad of [
      { type: 'earlierRecords' },
      { type: 'earlierRecords', before: -1 },
      { type: 'earlierRecords', before: 1.5 },
      { type: 'earlierRecords', before: 5, limit: 2001 },
      { type: 'earlierRecords', before: 5, limit: 0 },
      { type: 'earlierRecords', before: 5, extra: 1 },
    ])
      expect(() => validateLabCommand(bad)).toThrow(LabCommandError);
  });
});
