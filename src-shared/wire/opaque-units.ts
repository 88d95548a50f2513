// Pinned inputs of issue 30 item 19 (a): every ControlMsgWire/TimingMsgWire
// variant with a field whose type WIRE.md 3.5 does not give (the decode stops
// there and shows the rest as bytes), in every index table, with an empty and
// a non-empty undecoded tail, v1 and v2, as a ControlFrame, a len-framed one
// and a mux Data record carrying one, all with valid MACs. Shared by the
// dissector's unit test and the slow fuzz. Pure: builds bytes only.
import { MSG_KIND_CONTROL, MSG_KIND_TIMING, encodeControlFrame } from './control-frame';
import { MSG_TABLES, type ControlIndexTable, type MsgFamily } from './control-msg-tables';
import { encodeLenFrame } from './len-frame';
import type { Mac } from './mac';
import { encodeMuxRecord } from './mux';
import type { Layer } from './units-json-types';

export interface OpaqueUnit {
  name: string;
  layer: Layer;
  bytes: Uint8Array;
  table: ControlIndexTable;
  /** `Variant.field`, as the notes name it. */
  field: string;
}

/** The undecoded tails: none, a bincode-looking `None` and an f64 (the 42-byte fuzz find's shape), and 40 bytes. */
const TAILS: number[][] = [
  [],
  [0x00, 0x01, 0x00, 0x00, 0xe0, 0xf2, 0x11, 0x74, 0xe4, 0x3f],
  new Array(40).fill(7),
];

export function opaqueUnits(mac: Mac): OpaqueUnit[] {
  const out: OpaqueUnit[] = [];
  for (const table of Object.keys(MSG_TABLES) as ControlIndexTable[])
    for (const family of ['ControlMsgWire', 'TimingMsgWire'] as MsgFamily[])
      MSG_TABLES[table][family].forEach((spec, index) => {
        const at = spec.fields.findIndex((f) => f.type === 'opaque');
        if (at < 0) return;
        // The fields before the opaque one are all varint integers in these variants: 1 each.
        const before = spec.fields.slice(0, at).map(() => 1);
        TAILS.forEach((tail, k) => {
          const payload = Uint8Array.from([index, ...before, ...tail]);
          const msgKind = family === 'ControlMsgWire' ? MSG_KIND_CONTROL : MSG_KIND_TIMING;
          for (const version of [1, 2]) {
            const cf = encodeControlFrame({ version, msgKind, payload }, mac);
            const name = `${table} ${spec.name} tail ${tail.length} v${version}`;
            const field = `${spec.name}.${spec.fields[at].name}`;
            out.push({ name: `${name} ControlFrame`, layer: 'controlframe', bytes: cf, table, field });
            out.push({
              name: `${name} LenFrame`,
              layer: 'lenframe',
              bytes: encodeLenFrame(cf),
              table,
              field,
            });
            if (k === 1)
              out.push({
                name: `${name} mux Data`,
                layer: 'mux',
                bytes: encodeMuxRecord({ kind: 'Data', rank: 1, payload: cf }, mac),
                table,
                field,
              });
          }
        });
      });
  return out;
}
