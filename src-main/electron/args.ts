// The Electron shell's own flags, passed on by `npm start`: a trace to open
// at launch and the traces folder. Anything else (Chromium's own switches)
// is left alone.
import path from 'node:path';

export interface ElectronArgs {
  tracesDir: string;
  trace?: string;
  /** `--tap [ADDR:]PORT=HOST:PORT[@NAME][,...]` values and the `--salt` they share (parsed by tapsOfFlags). */
  tapFlags?: string[];
  salt?: string;
  /** `--attach HOST:PORT --token T`: a Slurm job's watch server to attach the window to. */
  attach?: { address: string; token: string };
}

export function parseElectronArgs(argv: string[], defaultTracesDir: string): ElectronArgs {
  const out: ElectronArgs = { tracesDir: defaultTracesDir };
  const attach: { address?: string; token?: string } = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = argv[i + 1];
    if ((a === '--trace' || a === '--traces-dir') && next !== undefined && !next.startsWith('--')) {
      if (a === '--trace') out.trace = path.resolve(next);
      else out.tracesDir = path.resolve(next);
      i++;
    } else if ((a === '--attach' || a === '--token') && next !== undefined && !next.startsWith('--')) {
      attach[a === '--attach' ? 'address' : 'token'] = next;
      i++;
    } else if ((a === '--tap' || a === '--salt') && next !== undefined && !next.startsWith('--')) {
      if (a === '--tap') (out.tapFlags ??= []).push(next);
      else out.salt = next;
      i++;
    }
  }
  if (attach.address !== undefined && attach.token !== undefined)
    out.attach = { address: attach.address, token: attach.token };
  return out;
}
