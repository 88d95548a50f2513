// The packaged app's fuses (scripts/package/fuses.mjs), without an Electron
// binary: the configuration itself, the step run on a file laid out as
// Electron's fuse wire is (the sentinel, version 1, the wire length, one byte
// a fuse), and the plain failures when there is no binary to work on.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
// @ts-expect-error plain ESM script without types
import { applyFuses, FUSES, FuseV1Options, PackagingError } from '../../scripts/package/fuses.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SENTINEL = 'dL7pKGdnNz796PbbjQWNKmHXBZaB9tsX';
const ON = 0x31;
const OFF = 0x30;
// Electron's own defaults: RunAsNode, NodeOptions, inspect and file:// privileges on; the rest off.
const ELECTRON_DEFAULTS = [ON, OFF, ON, ON, OFF, OFF, OFF, ON];

function fakeBinary(dir: string, wire: number[]): string {
  const file = path.join(dir, 'electron');
  const filler = Buffer.alloc(4096, 0xcc);
  fs.writeFileSync(
    file,
    Buffer.concat([filler, Buffer.from(SENTINEL), Buffer.from([1, wire.length, ...wire]), filler]),
  );
  return file;
}

function wireOf(file: string): number[] {
  const bytes = fs.readFileSync(file);
  const at = bytes.indexOf(SENTINEL) + SENTINEL.length;
  return [...bytes.subarray(at + 2, at + 2 + bytes[at + 1])];
}

const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-fuses-'));

describe('the packaged app fuses', () => {
  it('turn RunAsNode, NODE_OPTIONS and inspect off, cookie encryption and ASAR integrity/only-ASAR on, every fuse named', () => {
    const o = FuseV1Options as Record<string, number>;
    expect(FUSES).toMatchObject({ version: '1', strictlyRequireAllFuses: true });
    expect(FUSES[o.RunAsNode]).toBe(false);
    expect(FUSES[o.EnableNodeOptionsEnvironmentVariable]).toBe(false);
    expect(FUSES[o.EnableNodeCliInspectArguments]).toBe(false);
    expect(FUSES[o.EnableCookieEncryption]).toBe(true);
    expect(FUSES[o.EnableEmbeddedAsarIntegrityValidation]).toBe(true);
    expect(FUSES[o.OnlyLoadAppFromAsar]).toBe(true);
    expect(FUSES[o.GrantFileProtocolExtraPrivileges]).toBe(false);
    const named = Object.keys(FuseV1Options).filter((k) => /^\d+$/.test(k));
    expect(named.every((k) => typeof FUSES[k] === 'boolean')).toBe(true);
  });

  it('burns them into a binary and checks them back', async () => {
    const dir = tempDir();
    try {
      const file = fakeBinary(dir, ELECTRON_DEFAULTS);
      const before = fs.readFileSync(file);
      const set = await applyFuses(file);
      expect(set).toMatchObject({
        RunAsNode: false,
        EnableCookieEncryption: true,
        OnlyLoadAppFromAsar: true,
      });
      expect(wireOf(file)).toEqual([OFF, ON, OFF, OFF, ON, ON, OFF, OFF]);
      // Nothing else in the file changed.
      const after = fs.readFileSync(file);
      expect(after.length).toBe(before.length);
      expect([...after].filter((b, i) => b !== before[i]).length).toBe(7);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fails with a plain reason: no binary, no fuse wire, or a fuse this configuration does not decide', async () => {
    const dir = tempDir();
    try {
      await expect(applyFuses(path.join(dir, 'missing'))).rejects.toThrow(
        /^no Electron binary at .*missing: package the app first/,
      );
      await expect(applyFuses(undefined)).rejects.toBeInstanceOf(PackagingError);
      fs.writeFileSync(path.join(dir, 'plain'), 'not electron');
      await expect(applyFuses(path.join(dir, 'plain'))).rejects.toThrow(/cannot set the fuses .*sentinel/);
      // A later Electron with a ninth fuse: the step stops until it is decided here.
      const newer = fakeBinary(dir, [...ELECTRON_DEFAULTS, ON]);
      await expect(applyFuses(newer)).rejects.toThrow(/strictlyRequireAllFuses/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the command-line steps say in one line why they cannot run', () => {
    const r = spawnSync(process.execPath, ['scripts/package/apply-fuses.mjs', '/nonexistent/relay-lab'], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(
      'relay-lab package: no Electron binary at /nonexistent/relay-lab: package the app first (npm run package), then apply the fuses to its executable\n',
    );
    let electronInstalled = false;
    try {
      electronInstalled = fs.existsSync(createRequire(path.join(root, 'package.json'))('electron') as string);
    } catch {
      // not installed
    }
    if (!electronInstalled) {
      const p = spawnSync(process.execPath, ['scripts/package/package.mjs'], { cwd: root, encoding: 'utf8' });
      expect(p.status).toBe(1);
      expect(p.stderr).toMatch(
        /^relay-lab package: the (electron package|Electron binary) is not installed.*\n$/,
      );
    }
  });
});
