// The sampled consensus elements a lab rank reports with each adoption, as
// the base64 of their f32 bytes. As a JSON array of numbers (with the indices
// beside it) the report was ~100 KB a round at 4,096 samples and its
// serialization the largest single cost of a rank's round; NaN and the
// infinities also survive this form, where JSON turned them into null. The
// indices are not sent: both sides derive them (sampleIndices of the model).
import { LITTLE_ENDIAN_HOST } from '@shared/wire/tensor';

/** Sampled elements a lab rank reports per round unless the cluster says otherwise. */
export const DEFAULT_SAMPLE_MAX = 4096;

export function encodeSamples(values: Float32Array): string {
  const bytes = Buffer.from(values.buffer, values.byteOffset, values.byteLength);
  if (LITTLE_ENDIAN_HOST) return bytes.toString('base64');
  const le = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => le.writeFloatLE(v, i * 4));
  return le.toString('base64');
}

/** The sampled values, in sample order; a malformed string gives the values it holds. */
export function decodeSamples(b64: string): number[] {
  const bytes = Buffer.from(b64, 'base64');
  const out = new Array<number>(bytes.length >>> 2);
  for (let i = 0; i < out.length; i++) out[i] = bytes.readFloatLE(i * 4);
  return out;
}
