// Flags shared by the codec commands (encode, decode).
import { saltFromHex } from '@shared/wire/salt';
import { UsageError } from '../args';

/** --salt HEX is required: 32 hex chars (16 bytes), as flodl's salt_from_hex. */
export function saltFlag(value: string | undefined): Uint8Array {
  if (value === undefined) throw new UsageError('--salt HEX is required (32 hex chars, the session salt)');
  try {
    return saltFromHex(value);
  } catch (e) {
    throw new UsageError(`--salt: ${(e as Error).message}`);
  }
}
