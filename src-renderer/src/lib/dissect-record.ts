// Runs the codec's dissector over a record's captured bytes. The dissector
// is pure shared code: the renderer decodes and verifies (with the session's
// salt) without asking the engine.
import { dissect } from '@shared/wire/dissect';
import { saltFromHex } from '@shared/wire/salt';
import { channelOfMagic } from '@shared/wire/channel';
import type { UnitLayer } from '@shared/lab/records';
import type { ControlIndexTable } from '@shared/wire/control-msg-tables';
import type { FieldLike } from './field-ranges';

export interface RecordDissection {
  kind: string;
  fields: FieldLike[];
  verdict: string;
  message?: string;
}

export function dissectRecord(
  layer: UnitLayer,
  bytes: Uint8Array,
  saltHex: string,
  controlVersion?: number,
  /** The session's control message index table (TopologyConfig.controlIndexTable; default v2). */
  indexTable?: ControlIndexTable,
): RecordDissection {
  // The dissector has no layer for the 4-byte channel magic that opens a connection: name it here.
  if (layer === 'channelMagic') return dissectChannelMagic(bytes);
  try {
    const d = dissect(layer, bytes, { salt: saltFromHex(saltHex), controlVersion, indexTable });
    return { kind: d.kind, fields: d.fields, verdict: d.verdict, message: d.message };
  } catch (e) {
    // The dissector reports problems in its verdict; anything thrown is shown, never fatal to the window.
    return {
      kind: 'unknown',
      fields: [],
      verdict: 'error',
      message: e instanceof Error ? e.message : String(e),
    };
  }
}

function dissectChannelMagic(bytes: Uint8Array): RecordDissection {
  if (bytes.length < 4)
    return {
      kind: 'channel magic',
      fields: [
        {
          name: 'magic',
          key: 'hs.magic',
          offset: 0,
          length: bytes.length,
          value: `truncated: ${bytes.length} of 4 bytes`,
        },
      ],
      verdict: 'TRUNCATED',
    };
  const value = new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0, true);
  const channel = channelOfMagic(bytes.subarray(0, 4));
  const fields: FieldLike[] = [
    {
      name: 'magic',
      key: 'hs.magic',
      offset: 0,
      length: 4,
      value: `0x${value.toString(16).padStart(8, '0')} (${channel ?? 'unknown channel'})`,
    },
  ];
  if (bytes.length > 4)
    fields.push({
      name: 'trailing',
      key: 'hs.trailing',
      offset: 4,
      length: bytes.length - 4,
      value: `${bytes.length - 4} bytes`,
    });
  return { kind: 'channel magic', fields, verdict: channel ? 'ok' : 'BAD_MAGIC' };
}
