// Shared by the codec's tests: the reference vectors (copied from the spec
// into fixtures/ so a fresh clone has them) and the spec's named salts.
import vectorsJson from '../../fixtures/wire-vectors.json';
import { hexToBytes } from './bytes';
import { WireError, type WireErrorCode } from './errors';

export interface WireVector {
  name: string;
  salt: string;
  hex: string;
  unit: Record<string, unknown> & { layer: string };
  expect: string;
}

export const VECTORS: WireVector[] = vectorsJson as WireVector[];

export const SALT_A = hexToBytes('0102030405060708090a0b0c0d0e0f10');
export const SALT_B = hexToBytes('a1a2a3a4a5a6a7a8a9aaabacadaeafb0');
export const SAMPLE_SALT = hexToBytes('112233445566778899aabbccddeeff00');
export const AGENT_SALT = hexToBytes('112233445566778899aabbccddeeff01');
export const TEST_SALT = hexToBytes('42424242424242424242424242424242');
export const ROGUE_SALT = new Uint8Array(16).fill(0xaa);

/** The code of the WireError that `f` throws, or 'none'; anything else thrown is a failure. */
export function codeOf(f: () => unknown): WireErrorCode | 'none' {
  try {
    f();
    return 'none';
  } catch (e) {
    if (e instanceof WireError) return e.code;
    throw e;
  }
}
