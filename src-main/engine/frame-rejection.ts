// The line between a rank's read error and a rejected frame (flodl's
// rank_reader): the codec's reader throws for what it reads (a length over
// the ceiling, a close mid-frame), a role's sink throws for a frame it cannot
// use (HMAC, parse, fold validation). Wrapping the sink marks the latter.
import type { FrameSink } from '@shared/wire/reader-core';

/** A role's sink threw: the frame was read whole or in part but cannot be used. */
export class FrameRejected extends Error {
  constructor(readonly reason: Error) {
    super(reason.message);
  }
}

/** A role's sink whose throws are marked as rejections (told apart from the reader's own read errors). */
export function rejectingOnThrow(sink: FrameSink): FrameSink {
  const marked =
    <A extends unknown[]>(f: (...a: A) => void) =>
    (...a: A) => {
      try {
        f(...a);
      } catch (e) {
        throw new FrameRejected(e as Error);
      }
    };
  return {
    onStart: marked((len: number, header: Uint8Array) => sink.onStart(len, header)),
    onChunk: marked((b: Uint8Array) => sink.onChunk(b)),
    onEnd: marked(() => sink.onEnd()),
  };
}
