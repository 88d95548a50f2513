import type { Command } from './types';

// Not built yet: see the open issues.
export const runCommand: Command = {
  summary: '(not implemented yet)',
  async run() {
    process.stderr.write('relay-lab run: not implemented yet\n');
    return 2;
  },
};
