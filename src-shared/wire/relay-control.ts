// RelayControlMsg (WIRE.md 3.3): the bincode payload of a mux Control record.
import { BincodeReader, BincodeWriter, unknownVariantError } from './bincode';
import { WireError } from './errors';

export type RelayControlMsg =
  /** `modelSigs` exists from control protocol v4 on; the seed era has none. */
  | { type: 'Hello'; host: string; ranks: number[]; modelSigs?: Uint8Array[] }
  | { type: 'HelloAck' }
  | { type: 'RankExit'; rank: number }
  | { type: 'DeclareDead'; rank: number };

export const RELAY_CONTROL_INDEX = { Hello: 0, HelloAck: 1, RankExit: 2, DeclareDead: 3 } as const;
const MODEL_SIG_LEN = 32;

export function encodeRelayControl(msg: RelayControlMsg): Uint8Array {
  const w = new BincodeWriter().varint(RELAY_CONTROL_INDEX[msg.type]);
  switch (msg.type) {
    case 'Hello':
      w.string(msg.host).vec(msg.ranks, (w, r) => w.varint(r));
      if (msg.modelSigs) {
        w.vec(msg.modelSigs, (w, sig) => {
          if (sig.length !== MODEL_SIG_LEN)
            throw new WireError('BAD_PAYLOAD', `model signature must be 32 bytes, got ${sig.length}`);
          w.raw(sig);
        });
      }
      break;
    case 'RankExit':
    case 'DeclareDead':
      w.varint(msg.rank);
      break;
    case 'HelloAck':
      break;
  }
  return w.finish();
}

export interface RelayControlDecodeOptions {
  /** Read `model_sigs` after `ranks` (control protocol v4+). Default false (seed). */
  modelSigs?: boolean;
}

/**
 * Decodes one message. Trailing bytes after it are ignored, as flodl's reader
 * does (WIRE.md 3.2 rule 7); `used` says how many bytes the message took.
 */
export function decodeRelayControlWithLength(
  bytes: Uint8Array,
  opts: RelayControlDecodeOptions = {},
): { msg: RelayControlMsg; used: number } {
  // Field types as declared in mux.rs: index u32, host String, ranks Vec<u32>
  // (usize length, u32 elements), rank u32, model_sigs Vec<[u8; 32]>.
  const r = new BincodeReader(bytes);
  const idx = r.variant();
  let msg: RelayControlMsg;
  switch (idx) {
    case 0: {
      const host = r.string();
      const ranks = r.vec((r) => r.u32());
      msg = { type: 'Hello', host, ranks };
      if (opts.modelSigs) msg.modelSigs = r.vec((r) => r.array(MODEL_SIG_LEN));
      break;
    }
    case 1:
      msg = { type: 'HelloAck' };
      break;
    case 2:
      msg = { type: 'RankExit', rank: r.u32() };
      break;
    case 3:
      msg = { type: 'DeclareDead', rank: r.u32() };
      break;
    default:
      throw unknownVariantError(idx, 4, 'RelayControlMsg');
  }
  return { msg, used: r.offset };
}

export function decodeRelayControl(bytes: Uint8Array, opts: RelayControlDecodeOptions = {}): RelayControlMsg {
  return decodeRelayControlWithLength(bytes, opts).msg;
}
