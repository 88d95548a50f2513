// Small flag parser shared by the commands, on top of node:util's parseArgs,
// so that every usage error is a UsageError (exit 2) with a clear message.
import { parseArgs, type ParseArgsConfig } from 'node:util';

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

type Options = NonNullable<ParseArgsConfig['options']>;

export function parseFlags<O extends Options>(argv: string[], options: O, allowPositionals = false) {
  try {
    return parseArgs({ args: argv, options, allowPositionals, strict: true });
  } catch (e) {
    // parseArgs calls `--rounds -1` "ambiguous" over three lines; say plainly what happened.
    const ambiguous = /^Option '(--[\w-]+)' argument is ambiguous/.exec((e as Error).message);
    if (ambiguous) {
      const next = argv[argv.indexOf(ambiguous[1]) + 1];
      if (next?.startsWith('--')) throw new UsageError(`${ambiguous[1]} needs a value before ${next}`);
      throw new UsageError(
        `${ambiguous[1]} needs a value, got the flag-like '${next}' (negative numbers are not accepted; write ${ambiguous[1]}=VALUE for a value that starts with '-')`,
      );
    }
    throw new UsageError((e as Error).message);
  }
}

export function intFlag(value: string | undefined, name: string, fallback: number, min = 0): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value.trim())) throw new UsageError(`--${name} must be a whole number, got '${value}'`);
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < min)
    throw new UsageError(`--${name} must be at least ${min}, got '${value}'`);
  return n;
}

/** Sizes like 4194304, 4MiB, 64KiB, 1GiB, 4M. */
export function sizeFlag(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const m = /^(\d+(?:\.\d+)?)\s*(k|kib|kb|m|mib|mb|g|gib|gb|b)?$/i.exec(value.trim());
  if (!m) throw new UsageError(`--${name} must be a size such as 4194304, 64KiB or 4MiB, got '${value}'`);
  const unit = (m[2] ?? 'b').toLowerCase()[0];
  const mult = unit === 'k' ? 1024 : unit === 'm' ? 1024 ** 2 : unit === 'g' ? 1024 ** 3 : 1;
  const n = Math.round(Number(m[1]) * mult);
  if (!Number.isSafeInteger(n)) throw new UsageError(`--${name} is too large`);
  return n;
}

export function choiceFlag<T extends string>(
  value: string | undefined,
  name: string,
  choices: readonly T[],
  fallback: T,
): T {
  if (value === undefined) return fallback;
  if (!(choices as readonly string[]).includes(value)) {
    throw new UsageError(`--${name} must be one of ${choices.join(', ')}, got '${value}'`);
  }
  return value as T;
}

/** Reads all of stdin as text (for `encode` and `decode` without an argument). */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n');
}
