// The reproduction format's parser: a valid file round-trips, and each kind of
// mistake is a named error with the JSON path of the offending value.
import { describe, expect, it } from 'vitest';
import { checkExpectations, parseRepro, ReproFormatError, type ReplayOutcome } from './index';

const base = () => ({
  format: 'relay-lab-repro',
  version: 1,
  topology: { ranksPerHost: [2, 1], modelBytes: 1024, seed: 3, rounds: 4 },
  schedule: [
    { round: 1, action: 'link-fault', link: 'h1.uplink.data', fault: { dir: 'up', latencyMs: 20 } },
    { round: 2, action: 'kill-rank', rank: 1 },
  ],
  expectations: { dead: [1], rounds: [{ round: 0, verdict: 'ok' }] },
});

function errorOf(mutate: (o: ReturnType<typeof base> & Record<string, unknown>) => void): ReproFormatError {
  const o = base() as ReturnType<typeof base> & Record<string, unknown>;
  mutate(o);
  try {
    parseRepro(JSON.stringify(o));
  } catch (e) {
    if (e instanceof ReproFormatError) return e;
    throw e;
  }
  throw new Error('parsed without error');
}

describe('reproduction format v1', () => {
  it('parses a valid file with defaults filled in', () => {
    const r = parseRepro(JSON.stringify(base()));
    expect(r.topology).toMatchObject({
      ranksPerHost: [2, 1],
      mode: 'fold',
      policy: 'elastic',
      dtype: 'f32',
      intervalMs: 0,
    });
    expect(r.schedule.map((a) => a.action)).toEqual(['link-fault', 'kill-rank']);
  });

  it('the control index table: files without it are v2, v2-late is kept, anything else is named', () => {
    expect(parseRepro(JSON.stringify(base())).topology.controlIndexTable).toBe('v2');
    const late = base();
    (late.topology as Record<string, unknown>).controlIndexTable = 'v2-late';
    expect(parseRepro(JSON.stringify(late)).topology.controlIndexTable).toBe('v2-late');
    const e = errorOf((o) => ((o.topology as Record<string, unknown>).controlIndexTable = 'v3'));
    expect([e.code, e.path]).toEqual(['BAD_VALUE', 'topology.controlIndexTable']);
  });

  it('names each error with its code and path', () => {
    // The mutations reach into a plain JSON object of a known shape.
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const cases: [(o: any) => void, string, string][] = [
      [(o) => (o.extra = 1), 'UNKNOWN_FIELD', 'extra'],
      [(o) => (o.schedule[1].rank = 3), 'RANK_OUT_OF_RANGE', 'schedule[1].rank'],
      [(o) => (o.schedule[1].rankk = 1), 'UNKNOWN_FIELD', 'schedule[1].rankk'],
      [(o) => (o.schedule[0].round = 4), 'ROUND_OUT_OF_RANGE', 'schedule[0].round'],
      [(o) => (o.schedule[0].link = 'h2.uplink.data'), 'UNKNOWN_LINK', 'schedule[0].link'],
      [(o) => (o.schedule[0].fault.latencyMs = 'x'), 'BAD_TYPE', 'schedule[0].fault.latencyMs'],
      [
        (o) => o.schedule.push({ round: 3, action: 'historical' }),
        'UNSUPPORTED_ACTION',
        'schedule[2].action',
      ],
      [
        (o) => o.schedule.push({ round: 3, action: 'kill-host', host: 2 }),
        'HOST_OUT_OF_RANGE',
        'schedule[2].host',
      ],
      [(o) => (o.expectations.dead = [9]), 'RANK_OUT_OF_RANGE', 'expectations.dead[0]'],
      [(o) => (o.expectations.rounds[0].round = 7), 'ROUND_OUT_OF_RANGE', 'expectations.rounds[0].round'],
      [
        (o) => (o.expectations.rounds[0].consensusSha256 = 'abc'),
        'BAD_VALUE',
        'expectations.rounds[0].consensusSha256',
      ],
      [
        (o) => (o.expectations.linkBytes = [{ link: 'nope', max: 1 }]),
        'UNKNOWN_LINK',
        'expectations.linkBytes[0].link',
      ],
      [(o) => delete o.topology.seed, 'MISSING_FIELD', 'topology.seed'],
      [(o) => (o.topology.mode = 'ring'), 'BAD_VALUE', 'topology.mode'],
      [(o) => (o.version = 3), 'UNSUPPORTED_VERSION', 'version'],
      [
        (o) => ((o.schedule[0] as Record<string, unknown>).after = 'deposit'),
        'BAD_VALUE',
        'schedule[0].after',
      ],
      [
        (o) => ((o.schedule[0] as Record<string, unknown>).afterDead = [9]),
        'RANK_OUT_OF_RANGE',
        'schedule[0].afterDead[0]',
      ],
      [(o) => ((o.schedule[0] as Record<string, unknown>).afterMs = -1), 'BAD_TYPE', 'schedule[0].afterMs'],
      [(o) => (o.recordedFrom = 'x'), 'BAD_TYPE', 'recordedFrom'],
      [(o) => (o.format = 'x'), 'WRONG_FORMAT', 'format'],
    ];
    for (const [mutate, code, path] of cases) {
      const e = errorOf(mutate);
      expect([e.code, e.path]).toEqual([code, path]);
      expect(e.message).toContain(path);
    }
  });

  it('version 2: gates and recordedFrom are kept; a version 1 file stays version 1', () => {
    expect(parseRepro(JSON.stringify(base())).version).toBe(1);
    const v2 = {
      ...base(),
      version: 2,
      recordedFrom: 1,
      schedule: [
        { round: 1, action: 'pause-rank', rank: 2, after: 'consensus', atMs: 3 },
        { round: 1, action: 'resume-rank', rank: 2, afterMs: 2500, atMs: 2503 },
        { round: 2, action: 'resume-rank', rank: 0, afterDead: [0] },
      ],
    };
    const r = parseRepro(JSON.stringify(v2));
    expect(r.version).toBe(2);
    expect(r.recordedFrom).toBe(1);
    expect(r.schedule).toEqual(v2.schedule);
  });

  it('takes resume-rank of a paused rank, and names a bad rank in it', () => {
    const o = base();
    o.schedule.push(
      { round: 1, action: 'pause-rank', rank: 0 },
      { round: 2, action: 'resume-rank', rank: 0 },
    );
    expect(parseRepro(JSON.stringify(o)).schedule.at(-1)).toEqual({
      round: 2,
      action: 'resume-rank',
      rank: 0,
    });
    const e = errorOf((x) => x.schedule.push({ round: 2, action: 'resume-rank', rank: 5 }));
    expect([e.code, e.path]).toEqual(['RANK_OUT_OF_RANGE', 'schedule[2].rank']);
  });

  it('says where invalid JSON breaks', () => {
    const e = (() => {
      try {
        parseRepro('{\n  "format": "relay-lab-repro",\n  "version": 1,,\n}');
      } catch (x) {
        return x as ReproFormatError;
      }
    })()!;
    expect(e.code).toBe('NOT_JSON');
  });

  it('the checker names the expectation that fails', () => {
    const r = parseRepro(JSON.stringify(base()));
    const out: ReplayOutcome = {
      verdict: 'ok',
      roundsCompleted: 4,
      rounds: [{ round: 0, accepted: [0, 1, 2], verdict: 'mismatch', durationMs: 1, uplinkBytesPerHost: [] }],
      dead: [1],
      findings: [],
      links: [],
    };
    const res = checkExpectations(r, out);
    expect(res.filter((x) => !x.ok).map((x) => x.name)).toEqual(['expectations.rounds[0].verdict']);
    expect(res.find((x) => x.name === 'expectations.dead')!.ok).toBe(true);
  });
});
