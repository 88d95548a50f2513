// Electronegativity on the Electron layer, with the findings that are not
// problems explained in electronegativity.config.json: any other finding
// fails the run, and so does an explanation that no longer matches a
// finding (the configuration never silently outlives the code). A finding
// is matched by check, file and the code on its line, not by line number.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Findings of a SARIF report, each with the text of its line. */
export function findingsOf(sarif, inputDir) {
  const results = sarif.runs?.[0]?.results ?? [];
  return results.map((r) => {
    const loc = r.locations?.[0]?.physicalLocation;
    const file = loc?.artifactLocation?.uri ?? '';
    const line = loc?.region?.startLine ?? 0;
    let code = '';
    try {
      code = fs.readFileSync(path.join(inputDir, file), 'utf8').split('\n')[line - 1] ?? '';
    } catch {
      // a global finding may name no file
    }
    return { check: r.ruleId, file, line, code: code.trim(), message: r.message?.text ?? '' };
  });
}

/** Splits findings into accepted and new, and names the accepted entries nothing matched. */
export function judge(findings, accepted) {
  const used = new Set();
  const fresh = [];
  for (const f of findings) {
    const i = accepted.findIndex((a) => a.check === f.check && a.file === f.file && f.code.includes(a.code));
    if (i < 0) fresh.push(f);
    else used.add(i);
  }
  const stale = accepted.filter((_, i) => !used.has(i));
  return { fresh, stale, acceptedCount: used.size };
}

function run() {
  const config = JSON.parse(fs.readFileSync(path.join(root, 'electronegativity.config.json'), 'utf8'));
  const require = createRequire(path.join(root, 'package.json'));
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const electronVersion = /\d+\.\d+\.\d+/.exec(pkg.optionalDependencies?.electron ?? '')?.[0];
  const bin = path.join(
    path.dirname(require.resolve('@doyensec/electronegativity/package.json')),
    require('@doyensec/electronegativity/package.json').bin.electronegativity,
  );
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-electronegativity-')), 'r.sarif');
  const inputDir = path.join(root, config.input);
  const args = [bin, '-i', inputDir, '-r', '-v', 'false', '-o', out];
  if (electronVersion) args.push('-e', electronVersion);
  const r = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8' });
  if (!fs.existsSync(out)) {
    process.stderr.write(`electronegativity: no report (exit ${r.status})\n${r.stderr}\n`);
    process.exit(1);
  }
  const findings = findingsOf(JSON.parse(fs.readFileSync(out, 'utf8')), inputDir);
  fs.rmSync(path.dirname(out), { recursive: true, force: true });
  const { fresh, stale, acceptedCount } = judge(findings, config.accepted);
  for (const f of fresh)
    process.stderr.write(
      `electronegativity: NEW ${f.check} at ${f.file}:${f.line}: ${f.message}\n    ${f.code}\n`,
    );
  for (const a of stale)
    process.stderr.write(
      `electronegativity: the accepted ${a.check} in ${a.file} ('${a.code}') no longer occurs: remove it from electronegativity.config.json\n`,
    );
  process.stdout.write(
    `electronegativity: ${findings.length} finding(s): ${acceptedCount} explained in electronegativity.config.json, ${fresh.length} new, ${stale.length} stale explanation(s)\n`,
  );
  if (fresh.length || stale.length) process.exit(1);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) run();
