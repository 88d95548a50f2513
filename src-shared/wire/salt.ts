// The 16-byte session salt and its 32-char hex text form (WIRE.md 2.2).
import { SESSION_SALT_BYTES } from './constants';
import { bytesToHex } from './bytes';
import { WireError } from './errors';

/** All-zero salt: single-host tests only (WIRE.md 7.4). */
export const ZERO_SALT: Uint8Array = new Uint8Array(SESSION_SALT_BYTES);

/**
 * salt_from_hex: trims whitespace, requires exactly 32 chars ("hex must be 32
 * chars"), then hex-decodes ("hex-decode"). Throws WireError BAD_PAYLOAD.
 */
export function saltFromHex(hex: string): Uint8Array {
  const t = hex.trim();
  if (t.length !== SESSION_SALT_BYTES * 2)
    throw new WireError('BAD_PAYLOAD', `salt hex must be 32 chars, got ${t.length}`);
  if (!/^[0-9a-fA-F]{32}$/.test(t))
    throw new WireError('BAD_PAYLOAD', 'salt hex-decode failed: not a hex string');
  const out = new Uint8Array(SESSION_SALT_BYTES);
  for (let i = 0; i < SESSION_SALT_BYTES; i++) out[i] = parseInt(t.substr(i * 2, 2), 16);
  return out;
}

export function saltToHex(salt: Uint8Array): string {
  return bytesToHex(salt);
}

/** A fresh salt from the caller's CSPRNG (crypto.getRandomValues or node:crypto). */
export function randomSaltHex(randomBytes: (n: number) => Uint8Array): string {
  return saltToHex(randomBytes(SESSION_SALT_BYTES));
}
