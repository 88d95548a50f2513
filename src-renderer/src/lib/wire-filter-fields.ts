// The dissector's filter names (src-shared/explain: `mux.kind`, `rf.weight`,
// `ctl.msg`, ...) as fields of the records filter, and completion of names
// and values. A record in the list carries its metadata, not its bytes, so
// each name is read from what the record says: its kind and layer, its
// length, the weight (`w=`) and the message name its summary gives.
import type { UnitRecord } from '@shared/lab/records';
import { explanationFor } from '@shared/explain/field-explanations';

export interface WireFieldDef {
  kind: 'number' | 'string';
  get: (r: UnitRecord) => number | string | undefined;
}

const RELAY_MSGS = Object.keys(explanationFor('relay.msg')?.values ?? {});
const CTL_MSGS = Object.keys(explanationFor('ctl.msg')?.values ?? {});
const isRelayMsg = (r: UnitRecord) => r.layer === 'mux' && RELAY_MSGS.includes(r.kind);

/** The ControlFrame message a record's summary names ("Timing Heartbeat from rank 3" -> Heartbeat). */
function ctlMsgOf(r: UnitRecord): string | undefined {
  if (isRelayMsg(r) || r.layer === 'handshake' || r.layer === 'channelMagic') return undefined;
  return r.summary.split(/[^A-Za-z]+/).find((w) => CTL_MSGS.includes(w) && w !== 'DeclareDead') ?? undefined;
}

export const WIRE_FILTER_FIELDS: Record<string, WireFieldDef> = {
  'mux.kind': {
    kind: 'string',
    get: (r) => (r.layer !== 'mux' ? undefined : isRelayMsg(r) ? 'Control' : r.kind),
  },
  'mux.rank': {
    kind: 'number',
    get: (r) => (r.layer !== 'mux' ? undefined : r.kind === 'Data' ? r.rank : 0),
  },
  'mux.payload_len': { kind: 'number', get: (r) => (r.layer === 'mux' ? r.length - 25 : undefined) },
  'relay.msg': { kind: 'string', get: (r) => (isRelayMsg(r) ? r.kind : undefined) },
  'rf.weight': {
    kind: 'number',
    get: (r) => {
      const m = /\bw=(-?[\d.]+(?:e[-+]?\d+)?)/i.exec(r.summary);
      return m ? Number(m[1]) : undefined;
    },
  },
  'ctl.msg': { kind: 'string', get: ctlMsgOf },
  'hs.rank': { kind: 'number', get: (r) => (r.layer === 'handshake' ? r.rank : undefined) },
  'len.len': { kind: 'number', get: (r) => (r.layer === 'lenframe' ? r.length - 4 : undefined) },
};

/** What to offer at the end of `text`: field names while a name is typed, value names after an operator. */
export function filterCompletions(text: string, fieldNames: readonly string[]): string[] {
  const after = /([A-Za-z_.]+)\s*(==|!=)\s*([A-Za-z_]*)$/.exec(text);
  if (after) {
    const values =
      after[1] === 'kind'
        ? [...Object.keys(explanationFor('mux.kind')?.values ?? {}), ...RELAY_MSGS]
        : Object.keys(explanationFor(after[1])?.values ?? {});
    return values.filter((v) => v.toLowerCase().startsWith(after[3].toLowerCase()) && v !== after[3]).sort();
  }
  const word = /([A-Za-z_.]*)$/.exec(text)?.[1] ?? '';
  if (!word) return [];
  return fieldNames.filter((n) => n.startsWith(word.toLowerCase()) && n !== word).sort();
}

/** The filter text that selects records like this field's value ("Apply as filter"). */
export function filterForField(key: string, value: string): string {
  const named = /^\d+ \((\w+)/.exec(value)?.[1] ?? /"type":"(\w+)"/.exec(value)?.[1];
  if (named) return `${key} == ${named}`;
  if (/^-?\d+(\.\d+)?$/.test(value)) return `${key} == ${value}`;
  return key;
}
