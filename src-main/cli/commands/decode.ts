import type { Command } from './types';

// Not built yet: see the open issues.
export const decodeCommand: Command = {
  summary: '(not implemented yet)',
  async run() {
    process.stderr.write('relay-lab decode: not implemented yet\n');
    return 2;
  },
};
