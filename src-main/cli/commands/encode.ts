// relay-lab encode --salt HEX [--json UNIT]: one JSON unit (CLI.md section 1)
// from the argument or stdin, printed as the wire bytes in lowercase hex.
// Exit 0 ok, 1 the unit was rejected, 2 usage error.
import { nodeMac } from '../../crypto/node-mac';
import { bytesToHex } from '@shared/wire/bytes';
import { isWireError } from '@shared/wire/errors';
import { encodeUnit } from '@shared/wire/units-json';
import { saltFromHex } from '@shared/wire/salt';
import { UsageError, numberFlag, parseFlags, readStdin } from '../args';
import type { Command } from './types';

const HELP = `usage: relay-lab encode --salt HEX [--json UNIT] [--ceiling SIZE]

Reads one wire unit as JSON (CLI.md section 1) from --json or stdin and
prints its wire bytes as lowercase hex. Layers: mux, roundframe,
controlframe, lenframe, handshake.

example:
  relay-lab encode --salt 0102030405060708090a0b0c0d0e0f10 \\
    --json '{"layer":"mux","kind":"Data","rank":7,"payload":"deadbeef"}'`;

export const encodeCommand: Command = {
  summary: 'encode one JSON unit to wire bytes (hex)',
  async run(argv) {
    const { values } = parseFlags(argv, {
      salt: { type: 'string' },
      json: { type: 'string' },
      ceiling: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    });
    if (values.help) {
      process.stdout.write(HELP + '\n');
      return 0;
    }
    const salt = saltFlag(values.salt);
    const ceiling = numberFlag(values.ceiling, 'ceiling', 'ceiling', 1024 ** 3);
    const text = values.json ?? (await readStdin());
    let unit: unknown;
    try {
      unit = JSON.parse(text);
    } catch (e) {
      process.stderr.write(`relay-lab encode: the unit is not valid JSON: ${(e as Error).message}\n`);
      return 1;
    }
    try {
      process.stdout.write(bytesToHex(encodeUnit(unit, nodeMac(salt), { ceiling })) + '\n');
      return 0;
    } catch (e) {
      if (!isWireError(e)) throw e;
      process.stderr.write(`relay-lab encode: ${e.code}: ${e.message}\n`);
      return 1;
    }
  },
};

/** --salt HEX, required by encode and decode: 32 hex chars (16 bytes), as flodl's salt_from_hex. */
export function saltFlag(value: string | undefined): Uint8Array {
  if (value === undefined) throw new UsageError('--salt HEX is required (32 hex chars, the session salt)');
  try {
    return saltFromHex(value);
  } catch (e) {
    throw new UsageError(`--salt: ${(e as Error).message}`);
  }
}
