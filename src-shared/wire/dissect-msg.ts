// Dissection of bincode messages: a ControlFrame's ControlMsgWire /
// TimingMsgWire under the session's index table (every variant, each field at
// its byte offset, what WIRE.md does not give said so), and a mux Control
// record's RelayControlMsg. Bytes after a message are shown as information:
// flodl's decode ignores them.
import { isBincodeError } from './bincode';
import { bytesToHex } from './bytes';
import { DEFAULT_CONTROL_INDEX_TABLE, type ControlIndexTable, type MsgFamily } from './control-msg-tables';
import { preview, type Field } from './dissect-walker';
import { flodlMux } from './flodl-text';
import { decodeRelayControlWithLength } from './relay-control';
import { decodeWireMsg, type WireValue } from './wire-msg';

const show = (v: WireValue): string => (typeof v === 'string' ? v : JSON.stringify(v));

/** Children of a ControlFrame payload field: the message and its fields, or why it does not decode. */
export function messageFields(
  family: MsgFamily,
  payload: Uint8Array,
  base: number,
  table: ControlIndexTable = DEFAULT_CONTROL_INDEX_TABLE,
  notes: string[] = [],
): Field[] {
  try {
    const m = decodeWireMsg(family, payload, table);
    const idxLen = m.fields.length ? m.fields[0].offset : m.undecoded ? m.undecoded.offset : m.used;
    const out: Field[] = [
      {
        name: 'variant',
        offset: base,
        length: idxLen,
        value: `${m.index} (${m.name}, ${family} table ${table})`,
      },
    ];
    for (const f of m.fields) {
      const typeText = f.type === 'uint?' ? `integer, width not given (${f.note})` : f.type;
      out.push({
        name: f.name,
        offset: base + f.offset,
        length: f.length,
        value: `${show(f.value)} [${typeText}]`,
      });
    }
    if (m.undecoded) {
      out.push({
        name: m.undecoded.field,
        offset: base + m.undecoded.offset,
        length: m.undecoded.length,
        value: `not decoded: ${m.undecoded.note}; bytes ${preview(payload.subarray(m.undecoded.offset))}`,
      });
      notes.push(`${m.name}.${m.undecoded.field}: ${m.undecoded.note}`);
    }
    if (m.trailing > 0) {
      out.push({
        name: 'trailing (ignored)',
        offset: base + m.used,
        length: m.trailing,
        value: `${preview(payload.subarray(m.used))}: ${m.trailing} bytes after the message, ignored by flodl's decode`,
      });
      notes.push(
        `${m.trailing} bytes after the ${family} ${m.name}: ignored, as flodl's decode ignores them`,
      );
    }
    return out;
  } catch (e) {
    const text = isBincodeError(e) ? `bincode: ${e.bincode}` : (e as Error).message;
    return [
      {
        name: 'msg',
        offset: base,
        length: payload.length,
        value: `undecodable (${family}, table ${table}): ${text}`,
      },
    ];
  }
}

/** Children of a mux Control record's payload: the RelayControlMsg, or flodl's bincode error. */
export function relayControlFields(payload: Uint8Array, base: number, notes: string[] = []): Field[] {
  try {
    const { msg, used } = decodeRelayControlWithLength(payload);
    const json = JSON.stringify(
      msg.type === 'Hello' && msg.modelSigs ? { ...msg, modelSigs: msg.modelSigs.map(bytesToHex) } : msg,
    );
    const out: Field[] = [{ name: 'msg', offset: base, length: used, value: json }];
    if (used < payload.length) {
      out.push({
        name: 'trailing (ignored)',
        offset: base + used,
        length: payload.length - used,
        value: `${preview(payload.subarray(used))}: ignored by flodl's decode`,
      });
      notes.push(
        `${payload.length - used} bytes after the RelayControlMsg: ignored, as flodl's decode ignores them`,
      );
    }
    return out;
  } catch (e) {
    const text = isBincodeError(e) ? flodlMux.bincode(e.bincode) : (e as Error).message;
    return [{ name: 'msg', offset: base, length: payload.length, value: `undecodable: ${text}` }];
  }
}
