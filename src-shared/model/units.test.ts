import { describe, expect, it } from 'vitest';
import { formatBandwidth, parseBandwidth, parseLatency, UnitError } from './units';
import { CalibrationError, parseCalibration } from './calibration';
import { REFERENCE_CALIBRATION } from './reference-calibration';
import { defaultCalibrationPath } from './calibration-path';

describe('units', () => {
  it('reads bytes and bits per second, decimal and binary', () => {
    expect(parseBandwidth('12.5GB/s')).toBe(12.5e9);
    expect(parseBandwidth('100Gb/s')).toBe(12.5e9);
    expect(parseBandwidth('100Gbps')).toBe(12.5e9);
    expect(parseBandwidth('800MiB/s')).toBe(800 * 2 ** 20);
    expect(parseBandwidth('50000000')).toBe(50e6);
    expect(() => parseBandwidth('12XB')).toThrow(UnitError);
    expect(() => parseBandwidth('0')).toThrow(/above 0/);
    expect(formatBandwidth(12.5e9)).toBe('12.5 GB/s (100 Gb/s)');
  });
  it('reads latencies in ms, us, s', () => {
    expect(parseLatency('0.5ms')).toBe(0.5);
    expect(parseLatency('20us')).toBeCloseTo(0.02, 9);
    expect(parseLatency('1s')).toBe(1000);
    expect(parseLatency('3')).toBe(3);
    expect(() => parseLatency('-1ms')).toThrow(UnitError);
  });
});

describe('calibration', () => {
  it('accepts the reference and names a bad field', () => {
    expect(parseCalibration(JSON.parse(JSON.stringify(REFERENCE_CALIBRATION)))).toEqual(
      REFERENCE_CALIBRATION,
    );
    expect(() => parseCalibration({ ...REFERENCE_CALIBRATION, foldBytesPerMs: 0 })).toThrow(
      'calibration: foldBytesPerMs must be a positive number, got 0',
    );
    expect(() => parseCalibration({ ...REFERENCE_CALIBRATION, format: 'x' })).toThrow(CalibrationError);
    expect(() => parseCalibration(null)).toThrow(CalibrationError);
  });
  it('lives under XDG_CONFIG_HOME, else ~/.config', () => {
    expect(defaultCalibrationPath({ XDG_CONFIG_HOME: '/x' }, '/home/u')).toBe(
      '/x/relay-lab/calibration.json',
    );
    expect(defaultCalibrationPath({}, '/home/u')).toBe('/home/u/.config/relay-lab/calibration.json');
  });
});
