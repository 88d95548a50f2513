// The Electronegativity gate (scripts/electronegativity.mjs): a finding is
// accepted only when electronegativity.config.json explains that check, in
// that file, on that code; anything else is new and fails the run, and an
// explanation that matches nothing is stale and fails it too.
import { describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
// @ts-expect-error plain ESM script without types
import { findingsOf, judge } from '../../scripts/electronegativity.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const config = JSON.parse(fs.readFileSync(path.join(root, 'electronegativity.config.json'), 'utf8')) as {
  input: string;
  accepted: { check: string; file: string; code: string; reason: string }[];
};

/** A SARIF report shaped as Electronegativity 1.10.3 writes it. */
function sarif(results: { check: string; file: string; line: number }[]) {
  return {
    runs: [
      {
        results: results.map((r) => ({
          ruleId: r.check,
          level: 'warning',
          message: { text: `${r.check} message` },
          locations: [
            { physicalLocation: { artifactLocation: { uri: r.file }, region: { startLine: r.line } } },
          ],
        })),
      },
    ],
  };
}

describe('the Electronegativity gate', () => {
  it('explains every accepted finding', () => {
    expect(config.input).toBe('src-main/electron');
    for (const a of config.accepted) {
      expect(a.reason.length, a.check).toBeGreaterThan(40);
      // The code each entry names is in the file it names.
      expect(fs.readFileSync(path.join(root, config.input, a.file), 'utf8'), a.check).toContain(a.code);
    }
  });

  it('accepts what is explained and fails a new finding or a stale explanation', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-en-'));
    try {
      fs.writeFileSync(
        path.join(dir, 'shell.ts'),
        [
          'const created = new BrowserWindow(windowOptions(paths.preload));',
          'const other = new BrowserWindow({ webPreferences: { nodeIntegration: true } });',
          "callback({ responseHeaders: { 'Content-Security-Policy': [ELECTRON_CSP] } });",
        ].join('\n'),
      );
      const findings = findingsOf(
        sarif([
          { check: 'CONTEXT_ISOLATION_JS_CHECK', file: 'shell.ts', line: 1 },
          { check: 'SANDBOX_JS_CHECK', file: 'shell.ts', line: 1 },
          { check: 'AUXCLICK_JS_CHECK', file: 'shell.ts', line: 1 },
          { check: 'CSP_GLOBAL_CHECK', file: 'shell.ts', line: 3 },
          // The same check on other code is not covered by the explanation.
          { check: 'CONTEXT_ISOLATION_JS_CHECK', file: 'shell.ts', line: 2 },
          { check: 'NODE_INTEGRATION_JS_CHECK', file: 'shell.ts', line: 2 },
        ]),
        dir,
      );
      expect(findings[0]).toMatchObject({
        code: 'const created = new BrowserWindow(windowOptions(paths.preload));',
      });
      const verdict = judge(findings, config.accepted);
      expect(verdict.acceptedCount).toBe(4);
      expect(verdict.stale).toEqual([]);
      expect(verdict.fresh.map((f: { check: string; line: number }) => `${f.check}:${f.line}`)).toEqual([
        'CONTEXT_ISOLATION_JS_CHECK:2',
        'NODE_INTEGRATION_JS_CHECK:2',
      ]);
      // Without the CSP finding its explanation is stale.
      const withoutCsp = judge(
        findings.filter((f: { check: string }) => f.check !== 'CSP_GLOBAL_CHECK'),
        config.accepted,
      );
      expect(withoutCsp.stale.map((a: { check: string }) => a.check)).toEqual(['CSP_GLOBAL_CHECK']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
