// relay-lab command line (CLI.md). Each command lives in its own file under
// commands/; this file only dispatches. Exit codes: 0 ok, 1 rejected input or
// failed verdict, 2 usage error.
import { chooseFoldKernel } from '@shared/fold';
import { commands } from './commands/index';
import { UsageError } from './args';

const HELP = `usage: relay-lab <command> [options]

commands:
${Object.entries(commands)
  .map(([name, c]) => `  ${name.padEnd(11)} ${c.summary}`)
  .join('\n')}

Run 'relay-lab <command> --help' for a command's options.`;

export async function main(argv: string[]): Promise<number> {
  // The fold kernel is chosen once per process, here (WebAssembly SIMD where available).
  chooseFoldKernel('best');
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    (name ? process.stdout : process.stderr).write(HELP + '\n');
    return name ? 0 : 2;
  }
  const command = commands[name];
  if (!command) {
    // One line: the command list is a 'relay-lab --help' away.
    process.stderr.write(`relay-lab: unknown command '${name}' (relay-lab --help lists the commands)\n`);
    return 2;
  }
  try {
    return await command.run(rest);
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`relay-lab ${name}: ${e.message}\n`);
      return 2;
    }
    // Anything else that escapes a command (a config the engine rejects, a
    // port in use, a link that does not exist) is a rejected input: one
    // named line on stderr and exit 1, never a stack trace.
    const err = e as Error & { code?: unknown };
    const code = typeof err.code === 'string' ? `${err.code}: ` : '';
    process.stderr.write(`relay-lab ${name}: ${err.name ?? 'Error'}: ${code}${err.message ?? String(e)}\n`);
    if (process.env.RELAY_LAB_DEBUG) process.stderr.write(`${err.stack ?? ''}\n`);
    return 1;
  }
}
