// The calibration measured on the machine the model was written on (docs/model.md lists it):
// what the model reads when no calibration file exists, and what the window's
// "Beyond this machine" tab uses. `relay-lab calibrate` measures your own.
import type { Calibration } from './calibration';

export const REFERENCE_CALIBRATION: Calibration = {
  format: 'relay-lab-calibration',
  version: 1,
  measuredAt: '2026-12-07T00:29:08.685Z',
  machine: { cpus: 2, node: 'v20.20.2', platform: 'linux x64' },
  cores: 2,
  hmacBytesPerMs: 1088000,
  verifyBytesPerMs: 1631000,
  foldBytesPerMs: 14890000,
  copyBytesPerMs: 19910000,
  decodeBytesPerMs: 1299000,
  socketBytesPerMs: 1483000,
  hopMs: 0.01504,
  cpuPerMessageMs: 0.03428,
};
