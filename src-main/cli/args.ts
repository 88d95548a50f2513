// Small flag parser shared by the commands, on top of node:util's parseArgs,
// so that every usage error is a UsageError (exit 2) with a clear message.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { checkNumber, NUMBER_RANGES, type RangeName } from '@shared/lab/number-ranges';

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

/**
 * A numeric flag, checked against its range in the lab's one table
 * (src-shared/lab/number-ranges.ts, the window's too): a value outside it is
 * a UsageError naming the flag and the range, before anything starts.
 */
export function numberFlag(
  value: string | undefined,
  name: string,
  range: RangeName,
  fallback: number,
): number {
  if (value === undefined) return fallback;
  const r = checkNumber(NUMBER_RANGES[range], value, `--${name}`, true);
  if (!r.ok) throw new UsageError(r.error);
  return r.value;
}

/** numberFlag without a default: undefined when the flag is absent. */
export function optionalNumberFlag(
  value: string | undefined,
  name: string,
  range: RangeName,
): number | undefined {
  return value === undefined ? undefined : numberFlag(value, name, range, 0);
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
