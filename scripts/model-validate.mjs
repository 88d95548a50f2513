// The round model's validation (docs/model.md): calibrate, then every sweep of
// the README and issue 33's 1 MiB sweep with --predict, each as a Markdown
// table of predicted against measured. Never part of `npm test`; run it on a
// quiet machine: node scripts/model-validate.mjs [--out FILE.md]
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(root, 'bin', 'relay-lab.mjs');
const outArg = process.argv.indexOf('--out');
const outFile = outArg > 0 ? process.argv[outArg + 1] : null;

const SWEEPS = [
  [
    'issue 33: 1 MiB, shaped 50 MB/s',
    '--topologies 1x4,2x2,4x1,2x3 --modes fold,direct --model-bytes 1MiB --uplink-bandwidth 50000000',
  ],
  [
    'README: 256 KiB, unshaped',
    '--topologies 1x4,2x2,4x1 --modes fold,forward,direct --model-bytes 256KiB --rounds 3',
  ],
  [
    'README: 256 KiB, shaped 50 MB/s',
    '--topologies 1x4,2x2,4x1 --modes fold,direct --model-bytes 256KiB --rounds 3 --uplink-bandwidth 50000000',
  ],
  [
    'README: 4 MiB, shaped 50 MB/s',
    '--topologies 1x4,2x2,4x1 --modes fold,direct --model-bytes 4MiB --rounds 3 --uplink-bandwidth 50000000',
  ],
];

function run(args) {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: root, encoding: 'utf8', maxBuffer: 1 << 28 });
  if (r.status !== 0 && r.status !== 1)
    throw new Error(`relay-lab ${args.join(' ')}: exit ${r.status}\n${r.stderr}`);
  return r.stdout;
}

const cal = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'model-validate-')), 'calibration.json');
const load = () => os.loadavg()[0].toFixed(1);
const out = [];
process.stderr.write('calibrating\n');
run(['calibrate', '--out', cal]);
out.push(
  `Calibration: ${JSON.stringify(JSON.parse(fs.readFileSync(cal, 'utf8')), (k, v) => (k === 'primitives' ? undefined : typeof v === 'number' ? +v.toPrecision(4) : v))}`,
  '',
);
for (const [title, flags] of SWEEPS) {
  process.stderr.write(`${title}\n`);
  const before = load();
  const r = JSON.parse(run(['sweep', ...flags.split(' '), '--predict', '--calibration', cal, '--json']));
  out.push(
    `**${title}** (load average ${before} before, ${load()} after)`,
    '',
    '| topology | mode | measured median ms | predicted ms | error | within | bottleneck | stage the model missed (predicted / measured ms) |',
    '| -------- | ---- | ------------------ | ------------ | ----- | ------ | ---------- | ----------------------------------------------- |',
  );
  for (const c of r.cases) {
    const p = c.predicted;
    if (!p) {
      out.push(
        `| ${c.topology} | ${c.mode} | ${c.roundMs.median.toFixed(1)} | – | – | – | – | ${c.error ?? ''} |`,
      );
      continue;
    }
    const err = p.error === null ? '–' : `${p.error >= 0 ? '+' : ''}${Math.round(p.error * 100)} %`;
    const miss = p.wrongStage
      ? `${p.wrongStage.stage} ${p.wrongStage.predictedMs} / ${p.wrongStage.measuredMs}`
      : '';
    out.push(
      `| ${c.topology} | ${c.mode} | ${c.roundMs.median.toFixed(1)} | ${p.roundMs.toFixed(1)} | ${err} | ${p.within ? 'yes' : `no (${Math.round(p.tolerance * 100)} %)`} | ${p.bottleneck.stage}/${p.bottleneck.resource} | ${miss} |`,
    );
  }
  out.push('');
}
const text = out.join('\n') + '\n';
if (outFile) fs.writeFileSync(outFile, text);
process.stdout.write(text);
