// The files a command reads and writes, checked before anything starts: an
// input exists and is not a folder; an output's folder exists, it is not a
// folder, and it is none of the inputs nor another output (the same file by
// device and inode, whatever the spelling). Outputs are then written whole or
// not at all (src-main/files/atomic-write.ts).
import fs from 'node:fs';
import { FileWriteError, outputsApart, type NamedPath } from '../files/atomic-write';
import { UsageError } from './args';

/** An input file: exists and is not a folder (its contents are the command's to judge). */
export function inputFile(label: string, file: string): NamedPath {
  const st = fs.statSync(file, { throwIfNoEntry: false });
  if (!st) throw new UsageError(`${label} ${file}: no such file`);
  if (st.isDirectory()) throw new UsageError(`${label} ${file} is a folder, not a file`);
  return { label, path: file };
}

/** Outputs (absent flags left out) against the inputs: a UsageError naming the clash. */
export function checkOutputs(
  outputs: readonly { label: string; path: string | undefined }[],
  inputs: readonly NamedPath[] = [],
): void {
  try {
    outputsApart(
      outputs.filter((o): o is NamedPath => o.path !== undefined),
      inputs,
    );
  } catch (e) {
    if (e instanceof FileWriteError) throw new UsageError(e.message);
    throw e;
  }
}
