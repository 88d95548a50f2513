// Reading and writing the calibration file; a missing file falls back to the
// calibration measured when the model was written (docs/model.md), said so.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CalibrationError, parseCalibration, type Calibration } from '@shared/model/calibration';
import { defaultCalibrationPath } from '@shared/model/calibration-path';
import { REFERENCE_CALIBRATION } from '@shared/model/reference-calibration';

export function calibrationPath(): string {
  return defaultCalibrationPath(process.env, os.homedir());
}

export function writeCalibration(file: string, c: Calibration): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(c, null, 2) + '\n');
}

/**
 * The calibration at `file` (given: it must exist), else the default path's,
 * else the reference one; `source` says which.
 */
export function loadCalibration(file?: string): { calibration: Calibration; source: string } {
  const target = file ?? calibrationPath();
  if (!fs.existsSync(target)) {
    if (file !== undefined) throw new CalibrationError(`calibration: no file at ${file}`);
    return {
      calibration: REFERENCE_CALIBRATION,
      source: 'reference (docs/model.md; run relay-lab calibrate)',
    };
  }
  let json: unknown;
  try {
    json = JSON.parse(fs.readFileSync(target, 'utf8'));
  } catch (e) {
    throw new CalibrationError(`calibration: ${target} is not JSON (${(e as Error).message})`);
  }
  return { calibration: parseCalibration(json), source: target };
}

/** The default calibration file's, or the reference one where it is missing or unreadable (the window never fails a sweep over it). */
export function loadCalibrationOrReference(): Calibration {
  try {
    return loadCalibration().calibration;
  } catch {
    return REFERENCE_CALIBRATION;
  }
}
