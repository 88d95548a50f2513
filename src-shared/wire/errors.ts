// Typed wire errors with the stable codes of CLI.md section 1. Where flodl
// 0.7's own source words the same rejection, `flodlMessage` carries that
// wording with flodl's value formatting (relay/mux.rs: `relay_mux: ...`), so
// a user can match the lab's output to a flodl log line.
export const WIRE_ERROR_CODES = [
  'BAD_MAGIC',
  'BAD_VERSION',
  'OVER_CEILING',
  'HMAC_MISMATCH',
  'UNKNOWN_KIND',
  'TRUNCATED',
  'TRAILING_BYTES',
  'BAD_PAYLOAD',
  'TOO_MANY_TENSORS',
  'BAD_ROUND_KIND',
  'BAD_WEIGHT',
  'STARVED',
] as const;

export type WireErrorCode = (typeof WIRE_ERROR_CODES)[number];

export class WireError extends Error {
  override readonly name = 'WireError';
  constructor(
    readonly code: WireErrorCode,
    message: string,
    /** flodl's own error text for this rejection, when flodl's source words it (else undefined). */
    readonly flodlMessage?: string,
  ) {
    super(message);
  }
}

export function isWireError(e: unknown): e is WireError {
  return e instanceof WireError;
}
