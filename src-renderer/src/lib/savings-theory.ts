// What the savings panel puts beside its measurements: the wire format's own
// figures (src-shared/sweep/theory.ts, the sweep's), and the words that say
// which size is which (a model's size is counted in f32 elements; a bf16
// frame on the wire is about half of it).
import type { TopologyConfig, UplinkMode } from '@shared/lab/topology';
import {
  dataUpBytes,
  LEN_PREFIX_BYTES,
  MUX_RECORD_HEADER_BYTES,
  roundFrameBytes,
} from '@shared/sweep/theory';
import { formatBytes, formatInt } from './format';

type SizeConfig = Pick<TopologyConfig, 'modelBytes' | 'dtype' | 'shapes'>;

/** F: one RoundFrame's bytes on the wire for this model and dtype. */
export function frameBytesOf(cfg: SizeConfig): number {
  return roundFrameBytes(cfg.modelBytes, cfg.dtype, cfg.shapes);
}

/** The uplink's bytes per round over direct's (K x (4 + F)), headers included. */
export function theoryRatio(mode: UplinkMode, k: number, frame: number): number {
  return k > 0 ? dataUpBytes(mode, k, frame) / dataUpBytes('direct', k, frame) : NaN;
}

/** The theory ratio as a formula in F, e.g. "(25 + F) / (2 × (4 + F))". */
export function theoryFormula(mode: UplinkMode, k: number): string {
  const mux = `${MUX_RECORD_HEADER_BYTES} + F`;
  const len = `${LEN_PREFIX_BYTES} + F`;
  if (mode === 'fold') return `(${mux}) / (${k} × (${len}))`;
  if (mode === 'forward') return `${k} × (${mux}) / (${k} × (${len}))`;
  return `${k} × (${len}) / (${k} × (${len}))`;
}

/**
 * The model's size and its frame's, said apart: "1.00 MiB model (f32 elements), sent as bf16:
 * F = 512.0 KiB a frame". The model is always counted in f32 elements (4 bytes each); bf16
 * sends 2 bytes an element, so its frames are about half the model's size.
 */
export function sizeWords(cfg: SizeConfig): string {
  const f = frameBytesOf(cfg);
  const model = `${formatBytes(cfg.modelBytes)} model (f32 elements)`;
  const sent = cfg.dtype === 'bf16' ? 'sent as bf16, 2 B an element' : 'sent as f32';
  return `${model}, ${sent}: F = ${formatBytes(f)} (${formatInt(f)} B) a frame`;
}

/** Which size the model's is, in a few words: "1.00 MiB model as f32, sent as bf16". */
export function sizeNote(cfg: SizeConfig): string {
  return `${formatBytes(cfg.modelBytes)} model as f32${cfg.dtype === 'bf16' ? ', sent as bf16' : ''}`;
}

/** The topology header's short form: "1.00 MiB model · bf16 frames 512.0 KiB". */
export function sizeShort(cfg: SizeConfig): string {
  return `${formatBytes(cfg.modelBytes)} model · ${cfg.dtype} frames ${formatBytes(frameBytesOf(cfg))}`;
}
