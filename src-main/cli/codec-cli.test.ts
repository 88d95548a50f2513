// Every reference vector both ways through the real command line: the bundled
// CLI (out/node/cli.mjs, built by the test global setup) in a child process,
// plus the bin/relay-lab.mjs entry for stdin input and usage errors.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { VECTORS } from '@shared/wire/test-helpers';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cliUrl = pathToFileURL(path.join(root, 'out/node/cli.mjs')).href;
const RUNNER = `const { main } = await import(${JSON.stringify(cliUrl)}); process.exitCode = await main(process.argv.slice(1));`;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(args: string[], stdin?: string, viaBin = false): Promise<Run> {
  const env = { ...process.env };
  delete env.NODE_EXTRA_CA_CERTS;
  const argv = viaBin
    ? [path.join(root, 'bin/relay-lab.mjs'), ...args]
    : ['--input-type=module', '-e', RUNNER, '--', ...args];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argv, { cwd: root, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    // A command that never reads stdin may exit before the write lands: the pipe's EPIPE is
    // expected then, and an unhandled 'error' on stdin would fail the whole test run.
    child.stdin.on('error', () => {});
    child.stdin.end(stdin ?? '');
  });
}

describe('relay-lab encode/decode: every vector both ways', () => {
  for (const v of VECTORS) {
    if (v.expect === 'ok') {
      it(`encode ${v.name}`, async () => {
        const r = await run(['encode', '--salt', v.salt, '--json', JSON.stringify(v.unit)]);
        expect(r.stderr).toBe('');
        expect(r.code).toBe(0);
        expect(r.stdout.trim()).toBe(v.hex);
      });
    }
    it(`decode ${v.name} (${v.expect})`, async () => {
      const r = await run(['decode', '--salt', v.salt, '--layer', v.unit.layer, '--hex', v.hex]);
      const doc = JSON.parse(r.stdout);
      if (v.expect === 'ok') {
        expect(r.code).toBe(0);
        expect(doc).toMatchObject({ ...v.unit, verdict: 'ok' });
        expect(Array.isArray(doc.fields)).toBe(true);
      } else {
        expect(r.code).toBe(1);
        expect(doc).toMatchObject({ layer: v.unit.layer, verdict: 'error', code: v.expect });
        expect(typeof doc.message).toBe('string');
      }
    });
  }
});

describe('relay-lab encode/decode details', () => {
  it('reads stdin when the argument is absent (through bin/relay-lab.mjs)', async () => {
    const v = VECTORS.find((x) => x.name === 'mux control hello')!;
    const enc = await run(['encode', '--salt', v.salt], JSON.stringify(v.unit), true);
    expect(enc.code).toBe(0);
    expect(enc.stdout.trim()).toBe(v.hex);
    const dec = await run(['decode', '--salt', v.salt, '--layer', 'mux'], enc.stdout, true);
    expect(dec.code).toBe(0);
    expect(JSON.parse(dec.stdout)).toMatchObject({ ...v.unit, tag: v.hex.slice(34, 50), verdict: 'ok' });
  });

  it('adds the inner RoundFrame of a HostFrame, with offsets in the record', async () => {
    const salt = '42424242424242424242424242424242';
    const rf = VECTORS.find((x) => x.name === 'roundframe elided 57 bytes')!;
    const enc = await run([
      'encode',
      '--salt',
      salt,
      '--json',
      JSON.stringify({ layer: 'mux', kind: 'HostFrame', payload: rf.hex }),
    ]);
    const dec = JSON.parse(
      (await run(['decode', '--salt', salt, '--layer', 'mux', '--hex', enc.stdout.trim()])).stdout,
    );
    expect(dec.inner).toMatchObject({ offset: 25, layer: 'roundframe', verdict: 'ok' });
    const payload = dec.fields.find((f: { name: string }) => f.name === 'payload');
    expect(payload.children[0]).toMatchObject({ name: 'magic', offset: 25, length: 4 });
  });

  it('usage errors exit 2; rejected input exits 1', async () => {
    expect((await run(['decode', '--layer', 'mux', '--hex', '00'])).code).toBe(2);
    expect((await run(['decode', '--salt', '00'.repeat(16), '--layer', 'nope', '--hex', '00'])).code).toBe(2);
    expect((await run(['encode', '--salt', 'deadbeef', '--json', '{}'])).code).toBe(2);
    expect((await run(['encode', '--salt', '00'.repeat(16), '--json', '{not json'])).code).toBe(1);
    const bad = await run(['encode', '--salt', '00'.repeat(16), '--json', '{"layer":"mux","kind":"Nope"}']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/BAD_PAYLOAD/);
    const notHex = await run(['decode', '--salt', '00'.repeat(16), '--layer', 'mux', '--hex', 'zz']);
    expect(notHex.code).toBe(1);
    expect(JSON.parse(notHex.stdout)).toMatchObject({ verdict: 'error', code: 'BAD_PAYLOAD' });
  });
});

describe('relay-lab decode: flodl verdicts and wording (issue 8), index tables (issue 16 item 9)', () => {
  const zero = '00'.repeat(16);

  it('a header cut short is TRUNCATED with flodl text; what the prefix shows is a note', async () => {
    const r = await run(['decode', '--salt', zero, '--layer', 'mux', '--hex', 'd0170de1']);
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({
      verdict: 'error',
      code: 'TRUNCATED',
      flodlMessage: 'relay_mux: peer closed mid-frame (committed read hit EOF)',
    });
    expect(out.notes.join(' ')).toMatch(/cannot start a valid mux record/);
  });

  it('a u64 marker where a u32 is expected: bincode decode failed, as flodl logs it', async () => {
    const hex = 'd0170df1010000000200000000090000006d1e5504605d3fcafd0100000000000000';
    const out = JSON.parse((await run(['decode', '--salt', zero, '--layer', 'mux', '--hex', hex])).stdout);
    expect(out).toMatchObject({
      verdict: 'error',
      code: 'BAD_PAYLOAD',
      flodlMessage: 'relay_mux: bincode decode failed: InvalidIntegerType { expected: U32, found: U64 }',
    });
  });

  it('--index-table picks the ControlMsgWire table: 17 is CoordHeartbeat only in v2-late', async () => {
    const enc = await run([
      'encode',
      '--salt',
      zero,
      '--json',
      '{"layer":"controlframe","version":2,"msgKind":1,"payload":"11"}',
    ]);
    const hex = enc.stdout.trim();
    const late = JSON.parse(
      (
        await run([
          'decode',
          '--salt',
          zero,
          '--layer',
          'controlframe',
          '--index-table',
          'v2-late',
          '--hex',
          hex,
        ])
      ).stdout,
    );
    expect(late).toMatchObject({ verdict: 'ok', indexTable: 'v2-late', msg: { type: 'CoordHeartbeat' } });
    const v2 = JSON.parse(
      (await run(['decode', '--salt', zero, '--layer', 'controlframe', '--hex', hex])).stdout,
    );
    expect(v2).toMatchObject({ verdict: 'ok', indexTable: 'v2' });
    expect(v2.msgError).toMatch(/expected variant index 0 <= i < 16/);
    expect(
      (await run(['decode', '--salt', zero, '--layer', 'controlframe', '--index-table', 'v9', '--hex', hex]))
        .code,
    ).toBe(2);
  });
});
