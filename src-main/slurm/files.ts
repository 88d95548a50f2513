// The job folder's private files: written whole or not at all, readable by
// the job's user only.
import fs from 'node:fs';
import { writeFileAtomicSync } from '../files/atomic-write';

export function writePrivateFile(file: string, text: string): void {
  writeFileAtomicSync(file, text, { mode: 0o600 });
}

/** The salt file's hex; refused when others than its owner can read it (the key of every link). */
export function readSaltFile(file: string): string {
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch (e) {
    throw new Error(`SALT_FILE: cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? 'error'})`, {
      cause: e,
    });
  }
  if (!st.isFile()) throw new Error(`SALT_FILE: ${file} is not a file`);
  if ((st.mode & 0o077) !== 0)
    throw new Error(
      `SALT_FILE: ${file} is readable by others (mode ${(st.mode & 0o777).toString(8)}); chmod 600 it`,
    );
  if (st.size > 1024) throw new Error(`SALT_FILE: ${file} is ${st.size} bytes, not a 16-byte hex salt`);
  return fs.readFileSync(file, 'utf8').trim();
}
