// The one topology config check: the window's commands, `relay-lab run` and
// the lab's callers meet the same limits, the same salt rules and errors
// that name the field.
import { describe, expect, it } from 'vitest';
import { DEFAULT_TOPOLOGY } from './topology';
import {
  parseTopologyConfig,
  resolveTopologyConfig,
  TOPOLOGY_LIMITS,
  TopologyConfigError,
} from './topology-config';
import { parseSessionSalt, SaltError, type SessionSalt } from './session-salt';
import { validateLabCommand, LabCommandError } from './validate';

const fixedSalt = (): SessionSalt => parseSessionSalt('11'.repeat(16));

function fieldOf(f: () => unknown): string | undefined {
  try {
    f();
  } catch (e) {
    if (e instanceof TopologyConfigError || e instanceof LabCommandError) return e.field;
    throw e;
  }
  return undefined;
}

describe('parseTopologyConfig', () => {
  it('one set of limits: 32 ranks per host, 16 hosts, 64 ranks in all, for the window and run alike', () => {
    expect(TOPOLOGY_LIMITS).toMatchObject({ maxRanksPerHost: 32, maxHosts: 16, maxTotalRanks: 64 });
    expect(parseTopologyConfig({ ranksPerHost: [32, 32] }).ranksPerHost).toEqual([32, 32]);
    expect(() => parseTopologyConfig({ ranksPerHost: [33] })).toThrow(
      /config.ranksPerHost\[0\] must be between 1 and 32/,
    );
    expect(() => validateLabCommand({ type: 'start', config: { ranksPerHost: [33] } })).toThrow(
      /config.ranksPerHost\[0\] must be between 1 and 32/,
    );
    expect(() => parseTopologyConfig({ ranksPerHost: [32, 32, 1] })).toThrow(/at most 64 ranks in all/);
    expect(() => parseTopologyConfig({ ranksPerHost: Array(17).fill(1) })).toThrow(/at most 16 hosts/);
    expect(() => parseTopologyConfig({ ranksPerHost: Array(100_000).fill(1) })).toThrow(
      /at most 64 ranks in all/,
    );
  });

  it('takes the salt in either case with surrounding spaces (flodl salt_from_hex) and returns it lower case', () => {
    const upper = 'AB'.repeat(16);
    expect(parseTopologyConfig({ saltHex: ` ${upper} ` }).saltHex).toBe('ab'.repeat(16));
    const cmd = validateLabCommand({ type: 'start', config: { saltHex: upper } });
    expect(cmd).toEqual({ type: 'start', config: { saltHex: 'ab'.repeat(16) } });
  });

  it('names the field of every error, for the window and for the run flags', () => {
    expect(fieldOf(() => parseTopologyConfig({ ranksPerHost: [4, 0] }))).toBe('config.ranksPerHost[1]');
    expect(fieldOf(() => parseTopologyConfig({ saltHex: 'XYZ' }))).toBe('config.saltHex');
    expect(fieldOf(() => parseTopologyConfig({ stalenessMs: 10 }))).toBe('config.stalenessMs');
    expect(fieldOf(() => parseTopologyConfig({ starvationMs: 99 }))).toBe('config.starvationMs');
    expect(parseTopologyConfig({ starvationMs: 5000 }).starvationMs).toBe(5000);
    expect(fieldOf(() => validateLabCommand({ type: 'start', config: { modelBytes: 6 } }))).toBe(
      'config.modelBytes',
    );
    expect(fieldOf(() => validateLabCommand({ type: 'killRank', rank: -1 }))).toBe('killRank.rank');
  });

  it('refuses the lab-only fields from a front end, accepts them from the lab', () => {
    expect(() => parseTopologyConfig({ shapes: [[4]] })).toThrow(/unknown field 'shapes'/);
    expect(parseTopologyConfig({ shapes: [[4]], idleRanks: [0] }, { labFields: true })).toEqual({
      shapes: [[4]],
      idleRanks: [0],
    });
  });
});

describe('the control message index table (issue 16 item 9)', () => {
  it('is a named setting: v2 by default, v2-late selectable, anything else a named error', () => {
    expect(DEFAULT_TOPOLOGY.controlIndexTable).toBe('v2');
    expect(resolveTopologyConfig({}, fixedSalt).config.controlIndexTable).toBe('v2');
    expect(parseTopologyConfig({ controlIndexTable: 'v2-late' })).toEqual({ controlIndexTable: 'v2-late' });
    expect(resolveTopologyConfig({ controlIndexTable: 'v2-late' }, fixedSalt).config.controlIndexTable).toBe(
      'v2-late',
    );
    for (const bad of ['v3', 'V2', '', 2, null]) {
      expect(fieldOf(() => parseTopologyConfig({ controlIndexTable: bad }))).toBe('config.controlIndexTable');
      expect(() => parseTopologyConfig({ controlIndexTable: bad })).toThrow(
        /^config.controlIndexTable must be one of v2, v2-late$/,
      );
    }
    // The window's start command meets the same check, naming the field.
    expect(validateLabCommand({ type: 'start', config: { controlIndexTable: 'v2-late' } })).toMatchObject({
      config: { controlIndexTable: 'v2-late' },
    });
    expect(fieldOf(() => validateLabCommand({ type: 'start', config: { controlIndexTable: 'late' } }))).toBe(
      'config.controlIndexTable',
    );
  });
});

describe('the snap length (issue 30 item 2)', () => {
  it('is a setting of the window and the run: 64 B to 16 MiB, absent meaning 64 KiB', () => {
    expect(parseTopologyConfig({ snapLen: 1500 })).toEqual({ snapLen: 1500 });
    expect(validateLabCommand({ type: 'start', config: { snapLen: 65_536 } })).toEqual({
      type: 'start',
      config: { snapLen: 65_536 },
    });
    expect(fieldOf(() => parseTopologyConfig({ snapLen: 63 }))).toBe('config.snapLen');
    expect(fieldOf(() => parseTopologyConfig({ snapLen: TOPOLOGY_LIMITS.maxSnapLen + 1 }))).toBe(
      'config.snapLen',
    );
    expect(fieldOf(() => parseTopologyConfig({ snapLen: 1.5 }))).toBe('config.snapLen');
    expect(DEFAULT_TOPOLOGY.snapLen).toBeUndefined();
  });
});

describe('resolveTopologyConfig', () => {
  it('fills the defaults and parses the salt once into bytes and hex', () => {
    const { config, salt } = resolveTopologyConfig({ saltHex: '0F'.repeat(16), rounds: 3 }, fixedSalt);
    expect(config).toMatchObject({ ...DEFAULT_TOPOLOGY, rounds: 3, saltHex: '0f'.repeat(16) });
    expect(salt.hex).toBe('0f'.repeat(16));
    expect([...salt.bytes]).toEqual(Array(16).fill(15));
  });

  it('takes a fresh salt when none is named, and checks fields against each other', () => {
    expect(resolveTopologyConfig({}, fixedSalt).salt.hex).toBe('11'.repeat(16));
    expect(() => resolveTopologyConfig({ ranksPerHost: [1, 1], idleRanks: [2] }, fixedSalt)).toThrow(
      /config.idleRanks must be ranks of the world \(0..1\)/,
    );
  });
});

describe('parseSessionSalt', () => {
  it('names the field it came from', () => {
    expect(() => parseSessionSalt('abc', '--salt')).toThrow(SaltError);
    expect(() => parseSessionSalt('abc', '--salt')).toThrow(/^--salt: salt hex must be 32 chars, got 3$/);
  });
});
