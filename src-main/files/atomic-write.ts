// Every file the lab writes for a person (traces, reproductions, reports,
// pcapng, CSV, sweep saves) is written whole or not at all: the bytes go to
// a temporary name in the destination's own folder (so the rename stays on
// one file system), and only a complete file is renamed over the
// destination. A failed or interrupted write leaves the destination as it
// was. And an output never replaces an input: outputsApart compares files by
// device and inode (the same file reached by another spelling, a symlink or
// a hard link is the same file), not by the strings given.
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';

export class FileWriteError extends Error {
  override readonly name = 'FileWriteError';
  constructor(
    /** SAME_FILE: an output names an input (or another output); NOT_A_FILE: a folder. */
    readonly code: 'SAME_FILE' | 'NOT_A_FILE' | 'NO_FOLDER',
    message: string,
  ) {
    super(message);
  }
}

/**
 * Where the bytes really go: a symlink's target (the link stays a link), and
 * whether the destination is a device or pipe (/dev/null, a FIFO), which is
 * written in place: a rename would replace the device itself.
 */
function destination(file: string): { real: string; inPlace: boolean } {
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch {
    return { real: path.resolve(file), inPlace: false };
  }
  if (st.isDirectory()) throw new FileWriteError('NOT_A_FILE', `${file} is a folder, not a file`);
  return { real: fs.realpathSync(file), inPlace: !st.isFile() };
}

function tempNameFor(real: string): string {
  const dir = path.dirname(real);
  return path.join(dir, `.${path.basename(real)}.${process.pid}-${randomBytes(4).toString('hex')}.part`);
}

/** The destination's permissions carry over to the new file (a person's chmod survives a re-save). */
function keepMode(temp: string, real: string): void {
  try {
    fs.chmodSync(temp, fs.statSync(real).mode & 0o7777);
  } catch {
    // No earlier file: the default mode.
  }
}

/** Writes `data` to `file` whole or not at all; `mode` (e.g. 0o600 for a secret) instead of the old file's. */
export function writeFileAtomicSync(
  file: string,
  data: string | Uint8Array,
  opts: { mode?: number } = {},
): void {
  const { real, inPlace } = destination(file);
  if (inPlace) return fs.writeFileSync(real, data);
  const temp = tempNameFor(real);
  try {
    fs.writeFileSync(temp, data, { flag: 'wx', mode: opts.mode });
    if (opts.mode === undefined) keepMode(temp, real);
    else fs.chmodSync(temp, opts.mode);
    fs.renameSync(temp, real);
  } catch (e) {
    fs.rmSync(temp, { force: true });
    throw e;
  }
}

/** Writes `data` to `file` whole or not at all. */
export async function writeFileAtomic(file: string, data: string | Uint8Array): Promise<void> {
  const { real, inPlace } = destination(file);
  if (inPlace) return fs.promises.writeFile(real, data);
  const temp = tempNameFor(real);
  try {
    await fs.promises.writeFile(temp, data, { flag: 'wx' });
    keepMode(temp, real);
    await fs.promises.rename(temp, real);
  } catch (e) {
    await fs.promises.rm(temp, { force: true });
    throw e;
  }
}

/** Copies `source` to `dest` whole or not at all. */
export async function copyFileAtomic(source: string, dest: string): Promise<void> {
  const { real, inPlace } = destination(dest);
  if (inPlace) return fs.promises.copyFile(source, real);
  const temp = tempNameFor(real);
  try {
    await fs.promises.copyFile(source, temp, fs.constants.COPYFILE_EXCL);
    keepMode(temp, real);
    await fs.promises.rename(temp, real);
  } catch (e) {
    await fs.promises.rm(temp, { force: true });
    throw e;
  }
}

/**
 * A stream to `file` that becomes the file only when it ends cleanly: end()
 * renames the temporary file over the destination (the 'finish' event comes
 * after the rename); destroy() or a write error removes the temporary file
 * and leaves the destination as it was. Throws FileWriteError at once when
 * `file` is a folder. `writingTo`: where the bytes are until then (a reader
 * of the file while it grows, e.g. a Slurm job's trace served to a watcher).
 */
export function atomicWriteStream(file: string): Writable & { readonly writingTo: string } {
  const { real, inPlace } = destination(file);
  if (inPlace) return Object.assign(fs.createWriteStream(real), { writingTo: real });
  const temp = tempNameFor(real);
  const inner = fs.createWriteStream(temp, { flags: 'wx' });
  let committed = false;
  const innerError = new Promise<never>((_, reject) => inner.once('error', reject));
  innerError.catch(() => {});
  const settle = (p: Promise<unknown>, done: (e?: Error | null) => void) =>
    void Promise.race([p, innerError]).then(
      () => done(),
      (e: Error) => done(e),
    );
  // A write is done once the file has its bytes, not when the inner stream has them queued: a
  // writer's "flushed" (TraceWriter.flushed) then means readable at `writingTo`. Chunks that
  // queue meanwhile go to the file together (the inner stream's writev).
  const written = (chunks: { chunk: Buffer; encoding: BufferEncoding }[]) =>
    new Promise<void>((resolve, reject) => {
      inner.cork();
      chunks.forEach(({ chunk, encoding }, i) =>
        i === chunks.length - 1
          ? inner.write(chunk, encoding, (e) => (e ? reject(e) : resolve()))
          : inner.write(chunk, encoding),
      );
      inner.uncork();
    });
  const stream = new Writable({
    write(chunk: Buffer, encoding, done) {
      settle(written([{ chunk, encoding }]), done);
    },
    writev(chunks, done) {
      settle(written(chunks), done);
    },
    final(done) {
      settle(
        (async () => {
          await new Promise<void>((resolve) => inner.end(resolve));
          keepMode(temp, real);
          await fs.promises.rename(temp, real);
          committed = true;
        })(),
        done,
      );
    },
    destroy(err, done) {
      if (committed) return done(err);
      inner.destroy();
      fs.rm(temp, { force: true }, () => done(err));
    },
  });
  return Object.assign(stream, { writingTo: temp });
}

function identity(file: string): { dev: number; ino: number } | null {
  try {
    const st = fs.statSync(file);
    return { dev: st.dev, ino: st.ino };
  } catch {
    return null;
  }
}

/** Whether two names reach the same existing file (the same device and inode). */
export function sameFile(a: string, b: string): boolean {
  const x = identity(a);
  const y = identity(b);
  return !!x && !!y && x.dev === y.dev && x.ino === y.ino;
}

export interface NamedPath {
  /** How the person named it: '--trace', 'the reproduction file'. */
  label: string;
  path: string;
}

/**
 * Checks outputs before anything is written: each one's folder exists, none
 * is a folder, none is one of the inputs, and no two outputs are the same
 * file. Throws FileWriteError naming the two.
 */
export function outputsApart(outputs: readonly NamedPath[], inputs: readonly NamedPath[]): void {
  const resolved = outputs.map((o) => ({ ...o, abs: path.resolve(o.path) }));
  for (const o of resolved) {
    const dir = path.dirname(o.abs);
    if (!fs.existsSync(dir))
      throw new FileWriteError('NO_FOLDER', `${o.label}: folder ${dir} does not exist`);
    if (fs.statSync(o.abs, { throwIfNoEntry: false })?.isDirectory())
      throw new FileWriteError('NOT_A_FILE', `${o.label}: ${o.path} is a folder, not a file`);
    for (const i of inputs)
      if (sameFile(o.abs, i.path))
        throw new FileWriteError(
          'SAME_FILE',
          `${o.label} ${o.path} is ${i.label} ${i.path}: an output never replaces an input`,
        );
  }
  for (let a = 0; a < resolved.length; a++)
    for (let b = a + 1; b < resolved.length; b++) {
      const x = resolved[a];
      const y = resolved[b];
      if (x.abs === y.abs || sameFile(x.abs, y.abs))
        throw new FileWriteError('SAME_FILE', `${x.label} and ${y.label} name the same file ${x.path}`);
    }
}
