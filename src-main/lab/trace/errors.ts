// Named errors for reading traces and captures. Every malformed input gets one
// of these codes with the line (NDJSON) or byte offset (pcapng) it was found at.

export const TRACE_ERROR_CODES = [
  /** The first line is not a relay-lab trace header. */
  'NOT_A_TRACE',
  /** The header's version is newer than this reader. */
  'UNSUPPORTED_VERSION',
  /** A line is not valid JSON. */
  'BAD_JSON',
  /** A line is JSON but not a valid header or event. */
  'BAD_EVENT',
  /** A record's bytes are not base64 or do not match its `captured` count. */
  'BAD_BYTES',
  /** The input ended before the header line. */
  'EMPTY',
  /** A capture file is not a pcapng this reader understands. */
  'BAD_PCAPNG',
  /** A unit names a link that the header does not list. */
  'UNKNOWN_LINK',
  /** A link's endpoints cannot be written as IPv4/TCP (bad address or port). */
  'BAD_LINK',
] as const;

export type TraceErrorCode = (typeof TRACE_ERROR_CODES)[number];

export class TraceError extends Error {
  override readonly name = 'TraceError';
  constructor(
    readonly code: TraceErrorCode,
    message: string,
    /** 1-based line number for NDJSON, when known. */
    readonly line?: number,
  ) {
    super(line === undefined ? message : `line ${line}: ${message}`);
  }
}

export function isTraceError(e: unknown): e is TraceError {
  return e instanceof TraceError;
}
