// The codec's public surface in one import (docs/codec-api.md lists the modules).
export * from './errors';
export * from './mac';
export * from './constants';
export * from './bytes';
export * from './salt';
export * from './bincode';
export * from './relay-control';
export * from './mux';
export * from './tensor';
export {
  roundFrameWireLen,
  encodeRoundFrame,
  encodeRoundFrameChunks,
  decodeRoundFrame,
  roundKindName,
  type RoundFrame,
  type DecodedRoundFrame,
} from './round-frame';
export * from './round-frame-stream';
export * from './control-frame';
export * from './control-msgs';
export * from './handshake';
export * from './channel';
export * from './len-frame';
export * from './units-json';
export * from './readers';
export * from './dissect';
export * from './nested';
export * from './frame-ceiling';
export * from './streamed-writer';
