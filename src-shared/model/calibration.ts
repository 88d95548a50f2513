// The machine costs the round model reads (`relay-lab calibrate` measures
// them; src-main/model/calibrate.ts). Rates are bytes per millisecond of one
// core; hopMs is one one-way message between two processes over loopback TCP
// (half a measured round trip); cpuPerMessageMs the CPU both ends spend on it.

export const CALIBRATION_FORMAT = 'relay-lab-calibration';

export interface Calibration {
  format: typeof CALIBRATION_FORMAT;
  version: 1;
  measuredAt: string;
  machine: { cpus: number; node: string; platform: string };
  /** Cores the lab's processes share on this machine. */
  cores: number;
  /** node:crypto HMAC-SHA-256. */
  hmacBytesPerMs: number;
  /** A RoundFrame streamed through the parser with its footer MAC (a relay's or the controller's verify). */
  verifyBytesPerMs: number;
  /** The relay's fold, input bytes (the deposits) per ms. */
  foldBytesPerMs: number;
  /** Buffer.copy. */
  copyBytesPerMs: number;
  /** A rank's decode of the consensus (parse, MAC check). */
  decodeBytesPerMs: number;
  /** Loopback TCP, one socket between two processes. */
  socketBytesPerMs: number;
  hopMs: number;
  cpuPerMessageMs: number;
  /** The raw figures the rates came from. */
  primitives?: Record<string, number>;
}

const RATES = [
  'cores',
  'hmacBytesPerMs',
  'verifyBytesPerMs',
  'foldBytesPerMs',
  'copyBytesPerMs',
  'decodeBytesPerMs',
  'socketBytesPerMs',
  'hopMs',
  'cpuPerMessageMs',
] as const;

export class CalibrationError extends Error {
  override readonly name = 'CalibrationError';
}

/** A calibration read from JSON, every rate checked: a named error, never a NaN in a prediction. */
export function parseCalibration(value: unknown): Calibration {
  if (typeof value !== 'object' || value === null) throw new CalibrationError('calibration: not an object');
  const v = value as Record<string, unknown>;
  if (v.format !== CALIBRATION_FORMAT)
    throw new CalibrationError(
      `calibration: format must be '${CALIBRATION_FORMAT}', got ${JSON.stringify(v.format)}`,
    );
  if (v.version !== 1)
    throw new CalibrationError(`calibration: version must be 1, got ${JSON.stringify(v.version)}`);
  for (const k of RATES) {
    const x = v[k];
    if (typeof x !== 'number' || !Number.isFinite(x) || x <= 0)
      throw new CalibrationError(`calibration: ${k} must be a positive number, got ${JSON.stringify(x)}`);
  }
  return value as Calibration;
}
