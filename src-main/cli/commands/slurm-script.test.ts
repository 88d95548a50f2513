// `relay-lab slurm script`: the batch script carries the job's own switches
// to every task (here --no-remote-legs, which keeps hosts h1..'s loopback legs
// on their nodes), and only to the task's side of the `--`, never to run's.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { slurmCommand } from './slurm';

afterEach(() => {
  vi.restoreAllMocks();
});

async function script(args: string[]): Promise<string> {
  let out = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    out += String(chunk);
    return true;
  });
  expect(await slurmCommand.run(['script', '--hosts', '2', '--out', '/shared/job', ...args])).toBe(0);
  vi.restoreAllMocks();
  return out;
}

const srunLine = (text: string) => text.split('\n').find((l) => l.startsWith('srun '))!;

describe('slurm script', () => {
  it('sends the remote legs by default; --no-remote-legs reaches every task, before the run flags', async () => {
    expect(srunLine(await script([]))).not.toMatch(/remote-legs/);
    const line = srunLine(await script(['--no-remote-legs', '--rounds', '3']));
    const [task, run] = line.split(' -- ');
    expect(task).toMatch(/ slurm task --out "\$OUT" --salt-file "\$SALT_FILE" --no-remote-legs$/);
    expect(run).toMatch(/--hosts 2/);
    expect(run).not.toMatch(/remote-legs/);
  });
});
