import type { Command } from './types';

// Not built yet: see the open issues.
export const encodeCommand: Command = {
  summary: '(not implemented yet)',
  async run() {
    process.stderr.write('relay-lab encode: not implemented yet\n');
    return 2;
  },
};
