// The session salt as the lab holds it: parsed once, at the edge (a CLI flag,
// a start command), into both forms the code needs, the 16 bytes the MAC
// keys on and the 32-char lowercase hex that rank specs and traces carry.
import { SESSION_SALT_BYTES } from '../wire/constants';
import { saltFromHex, saltToHex } from '../wire/salt';
import { WireError } from '../wire/errors';

export interface SessionSalt {
  /** The 16 bytes (WIRE.md 2.2). */
  readonly bytes: Uint8Array;
  /** 32 lowercase hex chars. */
  readonly hex: string;
}

export class SaltError extends Error {
  override readonly name = 'SaltError';
  readonly code = 'BAD_SALT';
  constructor(
    /** The field or flag that carried it, e.g. "config.saltHex" or "--salt". */
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
  }
}

/** flodl's salt_from_hex rules (surrounding whitespace trimmed, either case), or SaltError naming `field`. */
export function parseSessionSalt(text: string, field = 'salt'): SessionSalt {
  try {
    const bytes = saltFromHex(text);
    return { bytes, hex: saltToHex(bytes) };
  } catch (e) {
    if (e instanceof WireError) throw new SaltError(field, e.message);
    throw e;
  }
}

/** A fresh salt from the caller's CSPRNG (crypto.getRandomValues or node:crypto's randomBytes). */
export function randomSessionSalt(randomBytes: (n: number) => Uint8Array): SessionSalt {
  const bytes = Uint8Array.from(randomBytes(SESSION_SALT_BYTES));
  return { bytes, hex: saltToHex(bytes) };
}
