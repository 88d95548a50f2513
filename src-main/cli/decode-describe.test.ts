// `relay-lab decode --json` prints each field's description from the one
// explanations table (src-shared/explain), in the real CLI process.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { describeField } from '@shared/explain/field-explanations';
import { VECTORS } from '@shared/wire/test-helpers';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cliUrl = pathToFileURL(path.join(root, 'out/node/cli.mjs')).href;
const RUNNER = `const { main } = await import(${JSON.stringify(cliUrl)}); process.exitCode = await main(process.argv.slice(1));`;

function decode(args: string[]): Promise<{ code: number | null; stdout: string }> {
  const env = { ...process.env };
  delete env.NODE_EXTRA_CA_CERTS;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', RUNNER, '--', 'decode', ...args], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout }));
  });
}

interface JsonField {
  name: string;
  key: string;
  description: string;
  children?: JsonField[];
}

function* walk(fields: JsonField[]): Generator<JsonField> {
  for (const f of fields) {
    yield f;
    if (f.children) yield* walk(f.children);
  }
}

describe('relay-lab decode: field descriptions', () => {
  for (const name of [
    'mux hostframe',
    'mux control hello',
    'controlframe v2 StartEpoch',
    'handshake control v2',
    'lenframe 5 bytes',
  ]) {
    const v = VECTORS.find((x) => x.name === name)!;
    it(`every field of '${name}' has its filter name and description`, async () => {
      const r = await decode(['--salt', v.salt, '--layer', v.unit.layer, '--hex', v.hex]);
      const doc = JSON.parse(r.stdout) as { fields: JsonField[]; inner?: { fields: JsonField[] } };
      const all = [...walk(doc.fields), ...walk(doc.inner?.fields ?? [])];
      expect(all.length).toBeGreaterThanOrEqual(2);
      for (const f of all) {
        expect(f.description, `${f.name} (${f.key})`).toBe(describeField(f.key));
        expect(f.description.length, f.name).toBeGreaterThan(20);
      }
    });
  }

  it('the MAC field says what it covers', async () => {
    const v = VECTORS.find((x) => x.unit.layer === 'mux' && x.expect === 'ok')!;
    const doc = JSON.parse((await decode(['--salt', v.salt, '--layer', 'mux', '--hex', v.hex])).stdout);
    const tag = doc.fields.find((f: JsonField) => f.name === 'auth_tag');
    expect(tag).toMatchObject({ key: 'mux.auth_tag', offset: 17, length: 8 });
    expect(tag.description).toMatch(/header bytes 0\.\.17 and the payload/);
  });
});
