// The one rule for what a unit's payload is judged as once its own layer has
// accepted it. Both of the lab's verdict paths follow it: the whole-unit
// dissection (inspector, `relay-lab decode`, small units from the side) and
// the side decoder's streamed check of big units (src-main/capture), so a
// unit's verdict never depends on its size.
//
// A mux record's payload is opaque to the mux layer: flodl's read_record
// (relay/mux.rs) checks the header, the ceiling and the HMAC over header and
// payload, and hands a Data / HostFrame / Broadcast payload on as bytes
// without parsing it (only a Control record's bincode message is decoded
// there). What the relay or the controller rejects later is another layer.
// So the payload is judged further only when its magic names a frame (a
// RoundFrame or a ControlFrame); any other payload leaves the mux verdict as
// it is. A len-framed blob has no layer in between: it must be a frame.
import { readU32LE } from './bytes';
import { CONTROL_FRAME_MAGIC, ROUND_FRAME_MAGIC } from './constants';

export type NestedLayer = 'roundframe' | 'controlframe';

/** Bytes of a payload the rule looks at (its magic). */
export const NESTED_MAGIC_LEN = 4;

/** The frame a payload or blob holds, by its leading magic; null: none the lab reads. */
export function nestedLayerOf(payload: Uint8Array): NestedLayer | null {
  if (payload.length < NESTED_MAGIC_LEN) return null;
  const m = readU32LE(payload, 0);
  return m === ROUND_FRAME_MAGIC ? 'roundframe' : m === CONTROL_FRAME_MAGIC ? 'controlframe' : null;
}

export const NESTED_KIND: Record<NestedLayer, 'RoundFrame' | 'ControlFrame'> = {
  roundframe: 'RoundFrame',
  controlframe: 'ControlFrame',
};

/**
 * The verdict on a payload no frame's magic names, by the layer carrying it:
 * none for a mux record (opaque to it), BAD_MAGIC for a len-framed blob.
 */
export function opaquePayloadVerdict(
  outer: 'mux' | 'lenframe',
): { code: 'BAD_MAGIC'; message: string } | null {
  return outer === 'mux'
    ? null
    : { code: 'BAD_MAGIC', message: 'len-framed blob is neither a RoundFrame nor a ControlFrame' };
}
