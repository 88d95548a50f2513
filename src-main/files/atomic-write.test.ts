// The shared writer: a file is written whole or not at all, the destination's
// folder keeps no temporary file, and an output that is an input (by another
// spelling, a symlink, a hard link) is refused before anything is written.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { finished } from 'node:stream/promises';
import {
  atomicWriteStream,
  copyFileAtomic,
  FileWriteError,
  outputsApart,
  writeFileAtomic,
  writeFileAtomicSync,
} from './atomic-write';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'atomic-write-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const at = (name: string) => path.join(dir, name);

describe('atomic writes', () => {
  it('replaces a file whole, keeps its mode and leaves no temporary file', async () => {
    fs.writeFileSync(at('a.json'), 'old');
    fs.chmodSync(at('a.json'), 0o640);
    writeFileAtomicSync(at('a.json'), 'new one');
    expect(fs.readFileSync(at('a.json'), 'utf8')).toBe('new one');
    expect(fs.statSync(at('a.json')).mode & 0o777).toBe(0o640);
    await writeFileAtomic(at('b.json'), 'b');
    fs.writeFileSync(at('src'), 'copied');
    await copyFileAtomic(at('src'), at('c'));
    expect(fs.readFileSync(at('c'), 'utf8')).toBe('copied');
    expect(fs.readdirSync(dir).sort()).toEqual(['a.json', 'b.json', 'c', 'src']);
  });

  it('a stream shows nothing until it ends, and a destroyed one leaves the old file as it was', async () => {
    fs.writeFileSync(at('t.ndjson'), 'precious');
    const s = atomicWriteStream(at('t.ndjson'));
    s.write('half of ');
    await new Promise((r) => setTimeout(r, 20));
    expect(fs.readFileSync(at('t.ndjson'), 'utf8')).toBe('precious');
    s.destroy(new Error('cut'));
    await finished(s).catch(() => {});
    await new Promise((r) => setTimeout(r, 20));
    expect(fs.readFileSync(at('t.ndjson'), 'utf8')).toBe('precious');
    expect(fs.readdirSync(dir)).toEqual(['t.ndjson']);
    const ok = atomicWriteStream(at('t.ndjson'));
    ok.write('a whole ');
    ok.end('file');
    await finished(ok);
    expect(fs.readFileSync(at('t.ndjson'), 'utf8')).toBe('a whole file');
    expect(fs.readdirSync(dir)).toEqual(['t.ndjson']);
  });

  it("a write's callback comes once the temporary file holds its bytes (a reader of writingTo sees them)", async () => {
    const out = atomicWriteStream(at('grow.ndjson'));
    const lines = ['one\n', 'two\n', 'three\n'];
    const seen: string[] = [];
    // Queued behind one another (the file is not even open yet): each callback finds its bytes there.
    for (const line of lines) out.write(line, () => seen.push(fs.readFileSync(out.writingTo, 'utf8')));
    await new Promise<void>((resolve) => out.write('', () => resolve()));
    expect(seen).toHaveLength(3);
    seen.forEach((text, i) => expect(text.startsWith(lines.slice(0, i + 1).join(''))).toBe(true));
    out.end();
    await finished(out);
    expect(fs.readFileSync(at('grow.ndjson'), 'utf8')).toBe(lines.join(''));
  });

  it('writes through a symlink to its target, and into a device in place', async () => {
    fs.writeFileSync(at('real'), 'x');
    fs.symlinkSync(at('real'), at('link'));
    writeFileAtomicSync(at('link'), 'through');
    expect(fs.lstatSync(at('link')).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(at('real'), 'utf8')).toBe('through');
    writeFileAtomicSync('/dev/null', 'gone');
    expect(fs.statSync('/dev/null').isCharacterDevice()).toBe(true);
  });

  it('refuses a folder as the destination', () => {
    expect(() => writeFileAtomicSync(dir, 'x')).toThrow(FileWriteError);
    expect(() => atomicWriteStream(dir)).toThrow(/is a folder/);
  });
});

describe('outputsApart', () => {
  it('refuses an output that is an input by another name, a symlink or a hard link', () => {
    fs.writeFileSync(at('in.json'), '{}');
    fs.symlinkSync(at('in.json'), at('sym.json'));
    fs.linkSync(at('in.json'), at('hard.json'));
    const input = [{ label: 'the reproduction file', path: at('in.json') }];
    for (const out of [at('in.json'), `${dir}/./in.json`, at('sym.json'), at('hard.json')])
      expect(() => outputsApart([{ label: '--trace', path: out }], input)).toThrow(/never replaces an input/);
    expect(() => outputsApart([{ label: '--trace', path: at('new.ndjson') }], input)).not.toThrow();
  });

  it('refuses two outputs to one file, a missing folder and a folder', () => {
    expect(() =>
      outputsApart(
        [
          { label: '--trace', path: at('x') },
          { label: '--save-repro', path: `${dir}/../${path.basename(dir)}/x` },
        ],
        [],
      ),
    ).toThrow(/--trace and --save-repro name the same file/);
    expect(() => outputsApart([{ label: '-o', path: at('no/such/x') }], [])).toThrow(/does not exist/);
    expect(() => outputsApart([{ label: '-o', path: dir }], [])).toThrow(/is a folder/);
  });
});
