// relay-lab calibrate: this machine's costs for the round model (docs/model.md).
import { calibrate } from '../../model/calibrate';
import { calibrationPath, writeCalibration } from '../../model/calibration-file';
import { numberFlag, parseFlags, printJson } from '../args';
import type { Command } from './types';

const USAGE = `usage: relay-lab calibrate [--out FILE] [--bytes S (8MiB)] [--json]
  Measures this machine's primitives (HMAC, streamed verify, fold, copy, decode,
  loopback TCP, one-way hop and its CPU) into the file the round model reads
  (default ${'$'}XDG_CONFIG_HOME/relay-lab/calibration.json, else ~/.config/relay-lab/calibration.json).
  --json also prints it. Progress on stderr.`;

export const calibrateCommand: Command = {
  summary: "measure this machine's costs for the round model (relay-lab predict, sweep --predict)",
  async run(argv) {
    const { values } = parseFlags(argv, {
      out: { type: 'string' },
      bytes: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean' },
    });
    if (values.help) {
      process.stdout.write(USAGE + '\n');
      return 0;
    }
    const bytes = numberFlag(values.bytes, 'bytes', 'calibrateBytes', 8 * 1024 * 1024);
    const out = values.out ?? calibrationPath();
    const c = await calibrate({ bytes, log: (m) => process.stderr.write(m + '\n') });
    writeCalibration(out, c);
    process.stderr.write(`relay-lab calibrate: wrote ${out}\n`);
    if (values.json) printJson(c);
    return 0;
  },
};
