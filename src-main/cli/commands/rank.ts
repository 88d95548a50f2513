import type { Command } from './types';

// Not built yet: see the open issues.
export const rankCommand: Command = {
  summary: '(not implemented yet)',
  async run() {
    process.stderr.write('relay-lab rank: not implemented yet\n');
    return 2;
  },
};
