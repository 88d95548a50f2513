// relay-lab decode --salt HEX --layer L [--hex HEX]: hex from the argument or
// stdin, decoded to the JSON unit of CLI.md section 1 plus tag, verdict and,
// on rejection, code, message and flodlMessage (flodl 0.7's own text for the
// rejection, where its source words it); `notes` (information that is not the
// verdict), `fields` (the dissection tree with byte offsets) and `inner` (the
// nested RoundFrame/ControlFrame) are added; each field carries its filter
// name (`key`) and `description` (src-shared/explain). Exit 0 ok, 1 rejected, 2 usage error.
import { nodeMac } from '../../crypto/node-mac';
import { hexToBytes } from '@shared/wire/bytes';
import { dissect, type Field } from '@shared/wire/dissect';
import { describeField } from '@shared/explain/field-explanations';
import { isWireError } from '@shared/wire/errors';
import {
  CONTROL_INDEX_TABLES,
  CONTROL_INDEX_TABLE_LABELS,
  DEFAULT_CONTROL_INDEX_TABLE,
} from '@shared/wire/control-msg-tables';
import { LAYERS, decodeUnitVerdict, isLayer } from '@shared/wire/units-json';
import { UsageError, choiceFlag, numberFlag, parseFlags, printJson, readStdin } from '../args';
import type { Command } from './types';
import { saltFlag } from './encode';

const HELP = `usage: relay-lab decode --salt HEX --layer L [--hex HEX] [--ceiling SIZE] [--control-version N]
                        [--index-table ${CONTROL_INDEX_TABLES.join('|')}] [--no-fields]

Decodes one wire unit given as hex (--hex or stdin) and prints one JSON
document: the unit (CLI.md section 1), tag, verdict ("ok" or "error"); for
errors code, message and flodlMessage (flodl 0.7's own log text for the
rejection, where its source words it); notes (what the decode saw that is not
the verdict: a header prefix that cannot be valid, bytes flodl ignores, field
types WIRE.md does not give); plus fields (byte offsets, filter name "key",
"description": what the field means, what flodl does with it, WIRE.md section)
and inner.
Checks run in flodl's order and at flodl's moment: nothing in a mux header is
judged before its 25th byte.
--index-table: the ControlFrame message index table (default ${DEFAULT_CONTROL_INDEX_TABLE}):
${CONTROL_INDEX_TABLES.map((t) => `  ${t}: ${CONTROL_INDEX_TABLE_LABELS[t]}`).join('\n')}
Layers: ${LAYERS.join(', ')}. Exit 0 ok, 1 rejected, 2 usage error.`;

/** The tree with each field's explanation (src-shared/explain) as `description`. */
function described(fields: Field[]): unknown[] {
  return fields.map((f) => ({
    ...f,
    description: describeField(f.key),
    ...(f.children ? { children: described(f.children) } : {}),
  }));
}

export const decodeCommand: Command = {
  summary: 'decode wire bytes (hex) of one unit to JSON with a verdict',
  async run(argv) {
    const { values } = parseFlags(argv, {
      salt: { type: 'string' },
      layer: { type: 'string' },
      hex: { type: 'string' },
      ceiling: { type: 'string' },
      'control-version': { type: 'string' },
      'index-table': { type: 'string' },
      'no-fields': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    });
    if (values.help) {
      process.stdout.write(HELP + '\n');
      return 0;
    }
    const salt = saltFlag(values.salt);
    const layer = values.layer;
    if (layer === undefined) throw new UsageError(`--layer is required (one of ${LAYERS.join(', ')})`);
    if (!isLayer(layer)) throw new UsageError(`--layer must be one of ${LAYERS.join(', ')}, got '${layer}'`);
    const ceiling = numberFlag(values.ceiling, 'ceiling', 'ceiling', 1024 ** 3);
    const controlVersion =
      values['control-version'] === undefined
        ? undefined
        : numberFlag(values['control-version'], 'control-version', 'version', 2);
    const indexTable = choiceFlag(
      values['index-table'],
      'index-table',
      CONTROL_INDEX_TABLES,
      DEFAULT_CONTROL_INDEX_TABLE,
    );
    // Accept bare hex or a JSON string (the output of another tool), whitespace ignored.
    const text = (values.hex ?? (await readStdin())).trim().replace(/^"(.*)"$/s, '$1');
    let bytes: Uint8Array;
    try {
      bytes = hexToBytes(text);
    } catch (e) {
      if (!isWireError(e)) throw e;
      printJson({ layer, verdict: 'error', code: e.code, message: `input is not hex: ${e.message}` });
      process.stderr.write(`relay-lab decode: ${e.code}: input is not hex: ${e.message}\n`);
      return 1;
    }
    const mac = nodeMac(salt);
    const opts = { ceiling, controlVersion, indexTable };
    const result: Record<string, unknown> = decodeUnitVerdict(layer, bytes, mac, opts);
    const d = dissect(layer, bytes, { mac, ...opts });
    // The dissector's information (early header hints, ignored bytes, nested notes), never the verdict.
    const notes = [...((result.notes as string[] | undefined) ?? [])];
    for (const n of d.notes ?? []) if (!notes.includes(n)) notes.push(n);
    if (notes.length) result.notes = notes;
    if (!values['no-fields']) {
      result.fields = described(d.fields);
      if (d.inner) result.inner = { offset: d.innerOffset, ...d.inner, fields: described(d.inner.fields) };
    }
    printJson(result);
    if (result.verdict === 'ok') return 0;
    // The verdict is the JSON on stdout; the terminal gets the reason in one line too (exit 1).
    process.stderr.write(`relay-lab decode: ${String(result.code)}: ${String(result.message)}\n`);
    return 1;
  },
};
