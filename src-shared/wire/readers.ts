// The incremental readers in one import (one file per reader).
export {
  ChunkAccumulator,
  ReaderBase,
  type FrameSink,
  type ReaderClock,
  type ReaderState,
  type ReaderStatus,
} from './reader-core';
export { LenFrameReader, type LenFrameReaderOptions } from './len-frame-reader';
export { MuxReader, streamModelSizedKinds, type MuxReaderOptions } from './mux-reader';
export { FixedReader, type FixedReaderOptions } from './fixed-reader';
export { NaiveReader, NAIVE_READER_LABEL, type NaiveReaderOptions } from './naive-reader';
