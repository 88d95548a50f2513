import type { Command } from './types';

// Not built yet: see the open issues.
export const scenarioCommand: Command = {
  summary: '(not implemented yet)',
  async run() {
    process.stderr.write('relay-lab scenario: not implemented yet\n');
    return 2;
  },
};
