// Types of the CLI.md section 1 JSON unit form (shared by units-json.ts and
// units-json-parse.ts).
import type { ControlIndexTable } from './control-msg-tables';
import type { WireErrorCode } from './errors';

export const LAYERS = ['mux', 'roundframe', 'controlframe', 'lenframe', 'handshake'] as const;
export type Layer = (typeof LAYERS)[number];

export function isLayer(s: string): s is Layer {
  return (LAYERS as readonly string[]).includes(s);
}

export type RelayControlJson =
  | { type: 'Hello'; host: string; ranks: number[]; modelSigs?: string[] }
  | { type: 'HelloAck' }
  | { type: 'RankExit'; rank: number }
  | { type: 'DeclareDead'; rank: number };

export type ElementJson = number | 'NaN' | 'Infinity' | '-Infinity' | '-0';
export type TensorJson =
  | { dtype: 'f32' | 'bf16'; dims: number[]; data: ElementJson[] }
  | { dtype: 'f32' | 'bf16'; dims: number[]; elided: true };

export type UnitJson =
  | { layer: 'mux'; kind: 'Data'; rank: number; payload: string }
  | { layer: 'mux'; kind: 'Control'; msg: RelayControlJson }
  | { layer: 'mux'; kind: 'HostFrame' | 'Broadcast'; payload: string }
  | { layer: 'roundframe'; roundKind: 'Model' | 'Control'; weight: number; tensors: TensorJson[] }
  | { layer: 'controlframe'; version: number; msgKind: number; payload: string }
  | { layer: 'lenframe'; blob: string }
  | { layer: 'handshake'; type: 'data' | 'control'; version: number; rank: number; worldSize: number }
  | { layer: 'handshake'; type: 'dataAck' | 'controlAck'; version: number };

/**
 * A decode result: the unit plus tag and verdict (CLI.md section 1). On a
 * rejection: `code` (stable), `message` (the lab's), and `flodlMessage`
 * (flodl's own text for it, where flodl's source words it). `notes`: what the
 * decode saw but flodl ignores (trailing bytes after a message or a footer,
 * fields whose type WIRE.md does not give).
 */
export type DecodedUnitJson = Record<string, unknown> & {
  layer: Layer;
  verdict: 'ok' | 'error';
  tag?: string;
  code?: WireErrorCode;
  message?: string;
  flodlMessage?: string;
  notes?: string[];
};

export interface UnitCodecOptions {
  ceiling?: number;
  /** Expected control protocol version for ControlFrames (default: any, MAC by the version field). */
  controlVersion?: number;
  /** The ControlFrame message index table (default v2). */
  indexTable?: ControlIndexTable;
}
