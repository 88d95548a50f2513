// The New topology form's typed fields: what a person types is kept as text
// (a draft) until they commit it (blur, Enter, Start). Only then is it
// checked against the lab's one set of limits (TOPOLOGY_LIMITS) and either
// becomes the form's value or an error shown beside the field. Nothing is
// clamped or rounded while typing, and Start never runs anything but the
// topology the fields show.
import { TOPOLOGY_LIMITS, parseTopologyConfig } from '@shared/lab/topology-config';
import { checkNumber, NUMBER_RANGES, type NumberRange } from '@shared/lab/number-ranges';
import { DEFAULT_SNAP_LEN, type TopologyConfig } from '@shared/lab/topology';

export interface TopologyForm {
  hosts: number;
  ranksPerHost: number;
  /** Optional ranks host by host ("4,2,3"); when given, it wins over hosts x ranksPerHost. */
  perHost?: string;
  modelMiB: number;
  mode: TopologyConfig['mode'];
  policy: TopologyConfig['policy'];
  dtype: TopologyConfig['dtype'];
  /** Absent in forms saved before the setting existed: the lab's default (v2). */
  controlIndexTable?: TopologyConfig['controlIndexTable'];
  /** Bytes the tap keeps of each unit; absent in forms saved before the setting existed (64 KiB). */
  snapLen?: number;
  /** Per host: its relay is a command (an external relay, e.g. a flodl build) rather than Relay Lab's. */
  relays?: { external: boolean; command: string }[];
}

export type TypedField = 'hosts' | 'ranksPerHost' | 'perHost' | 'modelMiB' | 'snapLen';
export const TYPED_FIELDS: readonly TypedField[] = [
  'hosts',
  'ranksPerHost',
  'perHost',
  'modelMiB',
  'snapLen',
];

export type Drafts = Partial<Record<TypedField, string>>;
export type FieldErrors = Partial<Record<TypedField | 'form', string>>;

const MiB = 1024 * 1024;
/** The smallest model: one f32 element. */
const MIN_MODEL_BYTES = 4;

/** "4,2,3" -> [4, 2, 3]; null unless every entry is a whole number within TOPOLOGY_LIMITS. */
export function parsePerHost(text: string | undefined): number[] | null {
  if (!text || !text.trim()) return null;
  const words = text.split(/[\s,]+/).filter(Boolean);
  const { maxHosts } = TOPOLOGY_LIMITS;
  if (words.length < 1 || words.length > maxHosts) return null;
  // Each entry as the Ranks per host field reads it: digits only (no 1e1, no 0x4).
  const parts: number[] = [];
  for (const w of words) {
    const r = checkNumber(NUMBER_RANGES.ranksPerHost, w, 'Ranks per host');
    if (!r.ok) return null;
    parts.push(r.value);
  }
  return parts;
}

/** A typed number against the lab's one range table (the command line's `--hosts` too). */
function wholeNumber(text: string, range: NumberRange, what: string): number | string {
  const r = checkNumber(range, text, what);
  return r.ok ? r.value : r.error;
}

/** The value a field's text commits to, or the error shown beside it. */
export function checkField(
  field: TypedField,
  text: string,
): { ok: true; value: number | string | undefined } | { ok: false; error: string } {
  const L = TOPOLOGY_LIMITS;
  const wrap = (v: number | string) =>
    typeof v === 'string' ? { ok: false as const, error: v } : { ok: true as const, value: v };
  switch (field) {
    case 'hosts':
      return wrap(wholeNumber(text, NUMBER_RANGES.hosts, 'Hosts'));
    case 'ranksPerHost':
      return wrap(wholeNumber(text, NUMBER_RANGES.ranksPerHost, 'Ranks per host'));
    case 'perHost':
      if (!text.trim()) return { ok: true, value: undefined };
      return parsePerHost(text)
        ? { ok: true, value: text.trim() }
        : {
            ok: false,
            error: `Ranks host by host: up to ${L.maxHosts} whole numbers from 1 to ${L.maxRanksPerHost}, separated by commas`,
          };
    case 'snapLen':
      return wrap(wholeNumber(text, NUMBER_RANGES.sessionSnapLen, 'Snap length (bytes)'));
    case 'modelMiB': {
      const t = text.trim();
      const n = Number(t);
      const max = NUMBER_RANGES.modelBytes.max / MiB;
      if (t === '' || !/^\d*\.?\d+$/.test(t) || !Number.isFinite(n))
        return { ok: false, error: `Model: a number of MiB up to ${max}` };
      if (n * MiB < NUMBER_RANGES.modelBytes.min || n > max)
        return { ok: false, error: `Model: ${t} MiB is outside 4 bytes to ${max} MiB` };
      return { ok: true, value: n };
    }
  }
}

/** The text a field shows: its draft while one exists, else the committed value. */
export function fieldText(form: TopologyForm, drafts: Drafts, field: TypedField): string {
  const draft = drafts[field];
  if (draft !== undefined) return draft;
  const v = field === 'snapLen' ? (form.snapLen ?? DEFAULT_SNAP_LEN) : form[field];
  return v === undefined ? '' : String(v);
}

export interface Committed {
  form: TopologyForm;
  drafts: Drafts;
  errors: FieldErrors;
}

/**
 * Commits the drafts of `fields`: each valid one becomes the form's value and
 * loses its draft; each invalid one keeps its draft and gets an error. Errors
 * of other fields are kept.
 */
export function commitDrafts(
  form: TopologyForm,
  drafts: Drafts,
  errors: FieldErrors,
  fields: readonly TypedField[] = TYPED_FIELDS,
): Committed {
  const next: TopologyForm = { ...form };
  const nextDrafts: Drafts = { ...drafts };
  const nextErrors: FieldErrors = { ...errors };
  delete nextErrors.form;
  for (const f of fields) {
    const text = drafts[f];
    if (text === undefined) continue;
    const r = checkField(f, text);
    if (!r.ok) {
      nextErrors[f] = r.error;
      continue;
    }
    delete nextErrors[f];
    delete nextDrafts[f];
    if (f === 'perHost') {
      if (r.value === undefined) delete next.perHost;
      else next.perHost = r.value as string;
    } else next[f] = r.value as number;
  }
  return { form: next, drafts: nextDrafts, errors: nextErrors };
}

/** The topology the form shows, as a start config: host by host when given, else hosts x ranks. */
export function formToConfig(form: TopologyForm): Partial<TopologyConfig> {
  return {
    ranksPerHost: parsePerHost(form.perHost) ?? Array.from({ length: form.hosts }, () => form.ranksPerHost),
    modelBytes: Math.max(MIN_MODEL_BYTES, Math.round((form.modelMiB * MiB) / 4) * 4),
    mode: form.mode,
    policy: form.policy,
    dtype: form.dtype,
    ...(form.controlIndexTable ? { controlIndexTable: form.controlIndexTable } : {}),
    snapLen: form.snapLen ?? DEFAULT_SNAP_LEN,
    ...relayCommandsOf(form),
  };
}

/** The hosts' relay commands when some host's relay is a command (fold mode only), else nothing. */
function relayCommandsOf(form: TopologyForm): Partial<TopologyConfig> {
  if (form.mode !== 'fold' || !form.relays?.some((r) => r.external)) return {};
  const hosts = (parsePerHost(form.perHost) ?? Array.from({ length: form.hosts })).length;
  const commands = Array.from({ length: hosts }, (_, h) => {
    const r = form.relays?.[h];
    return r?.external ? r.command : null;
  });
  return commands.some((c) => c !== null) ? { relayCommands: commands } : {};
}

/**
 * What Start runs: every draft committed first; null (with the errors to
 * show) when any field is wrong or the whole topology breaks a limit (the
 * lab's one config check), so Start never runs a topology other than the
 * one the fields show.
 */
export function configForStart(
  form: TopologyForm,
  drafts: Drafts,
  errors: FieldErrors,
): Committed & { config: Partial<TopologyConfig> | null } {
  const c = commitDrafts(form, drafts, errors);
  if (TYPED_FIELDS.some((f) => c.errors[f])) return { ...c, config: null };
  const config = formToConfig(c.form);
  const total = (config.ranksPerHost ?? []).reduce((a, b) => a + b, 0);
  if (total > TOPOLOGY_LIMITS.maxTotalRanks)
    return {
      ...c,
      errors: {
        ...c.errors,
        form: `${total} ranks in all: the lab runs at most ${TOPOLOGY_LIMITS.maxTotalRanks} rank processes`,
      },
      config: null,
    };
  try {
    parseTopologyConfig(config);
  } catch (e) {
    return { ...c, errors: { ...c.errors, form: e instanceof Error ? e.message : String(e) }, config: null };
  }
  return { ...c, config };
}
