// The New topology form's number fields: kept as typed, checked on commit,
// and Start never runs another topology than the one shown.
import { describe, it, expect } from 'vitest';
import {
  checkField,
  commitDrafts,
  configForStart,
  fieldText,
  formToConfig,
  type TopologyForm,
} from './form-fields';

const base: TopologyForm = {
  hosts: 2,
  ranksPerHost: 4,
  modelMiB: 4,
  mode: 'fold',
  policy: 'elastic',
  dtype: 'f32',
};

describe('form fields', () => {
  it('keeps every keystroke as typed: "0.", "0.5" and "4" are not clamped on the way', () => {
    // Typing 0.5 goes through "0" and "0.": the field shows each as typed, the form keeps 4 MiB until commit.
    for (const t of ['0', '0.', '0.5']) expect(fieldText(base, { modelMiB: t }, 'modelMiB')).toBe(t);
    const c = commitDrafts(base, { modelMiB: '0.5' }, {});
    expect(c.form.modelMiB).toBe(0.5);
    expect(c.drafts).toEqual({});
    expect(c.errors).toEqual({});
    // Hosts: "4" commits to 4 (it was 8 when every keystroke was clamped against a partial value).
    expect(commitDrafts(base, { hosts: '4' }, {}).form.hosts).toBe(4);
  });

  it('refuses a wrong value on commit with a reason, keeping the text and the old value', () => {
    const c = commitDrafts(base, { hosts: '40', ranksPerHost: '2.5', modelMiB: 'abc' }, {});
    expect(c.form).toEqual(base);
    expect(c.drafts).toEqual({ hosts: '40', ranksPerHost: '2.5', modelMiB: 'abc' });
    expect(c.errors.hosts).toBe('Hosts: 40 is outside 1 to 16');
    expect(c.errors.ranksPerHost).toBe('Ranks per host: a whole number from 1 to 32');
    expect(c.errors.modelMiB).toMatch(/^Model: a number of MiB/);
    expect(checkField('modelMiB', '0').ok).toBe(false);
    expect(checkField('modelMiB', '600').ok).toBe(false);
    expect(checkField('perHost', '4,0').ok).toBe(false);
    expect(checkField('perHost', ' ')).toEqual({ ok: true, value: undefined });
    // Hostile text never becomes a number: the same ranges and words as `relay-lab run --hosts`.
    for (const t of ['1e9', 'NaN', 'Infinity', '-1', '0x10', '1000000000'])
      expect(checkField('hosts', t).ok, t).toBe(false);
    expect(checkField('hosts', '1000000000')).toEqual({
      ok: false,
      error: 'Hosts: 1000000000 is outside 1 to 16',
    });
    for (const t of ['1e1,2', '0x4', '4,Infinity', '2,-1'])
      expect(checkField('perHost', t).ok, t).toBe(false);
    for (const t of ['0x10', 'Infinity', '1e308', '1e2', '-4', 'NaN'])
      expect(checkField('modelMiB', t).ok, t).toBe(false);
    // A corrected value clears its error.
    const fixed = commitDrafts(c.form, { ...c.drafts, hosts: '3' }, c.errors, ['hosts']);
    expect(fixed.form.hosts).toBe(3);
    expect(fixed.errors.hosts).toBeUndefined();
    expect(fixed.errors.ranksPerHost).toBeDefined();
  });

  it('Start commits what is typed and starts exactly that, or nothing', () => {
    const ok = configForStart(base, { hosts: '3', modelMiB: '0.5' }, {});
    expect(ok.config?.ranksPerHost).toEqual([4, 4, 4]);
    expect(ok.config?.modelBytes).toBe(512 * 1024);
    // An invalid draft: no config, so no start with the old (different) value.
    const bad = configForStart(base, { hosts: '9x' }, {});
    expect(bad.config).toBeNull();
    expect(bad.errors.hosts).toBeDefined();
    // A host-by-host list that does not parse no longer falls back to hosts x ranks.
    const perHost = configForStart(base, { perHost: '4,x' }, {});
    expect(perHost.config).toBeNull();
    expect(perHost.errors.perHost).toMatch(/Ranks host by host/);
    // Fields that are each fine but together exceed the lab's limit of rank processes.
    const tooMany = configForStart(base, { hosts: '16', ranksPerHost: '8' }, {});
    expect(tooMany.config).toBeNull();
    expect(tooMany.errors.form).toBe('128 ranks in all: the lab runs at most 64 rank processes');
  });
});

describe('the snap length field (issue 30 item 2)', () => {
  it('shows the default, commits a value within the limits and refuses others with a reason', () => {
    expect(fieldText(base, {}, 'snapLen')).toBe('65536');
    expect(commitDrafts(base, { snapLen: '1500' }, {}).form.snapLen).toBe(1500);
    expect(commitDrafts(base, { snapLen: '10' }, {}).errors.snapLen).toBe(
      'Snap length (bytes): 10 is outside 64 to 16777216',
    );
    expect(configForStart({ ...base, snapLen: 4096 }, {}, {}).config?.snapLen).toBe(4096);
  });
});

describe('formToConfig: relays per host', () => {
  const base = {
    hosts: 3,
    ranksPerHost: 2,
    modelMiB: 1,
    mode: 'fold',
    policy: 'elastic',
    dtype: 'f32',
  } as const;
  it('names the command of each host whose relay is a command, null for the others', () => {
    const relays = [
      { external: true, command: '/opt/flodl/relay' },
      { external: false, command: 'kept but unused' },
    ];
    expect(formToConfig({ ...base, relays }).relayCommands).toEqual(['/opt/flodl/relay', null, null]);
  });
  it('leaves relayCommands out when every host keeps Relay Lab relay, or the mode has no relay', () => {
    expect(formToConfig({ ...base, relays: [{ external: false, command: 'x' }] })).not.toHaveProperty(
      'relayCommands',
    );
    expect(
      formToConfig({ ...base, mode: 'forward', relays: [{ external: true, command: 'x' }] }),
    ).not.toHaveProperty('relayCommands');
  });
});
