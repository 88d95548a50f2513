// Browser mode's entry (bundled to out/node/web.mjs): the lab host (the live
// TopologySession, its recording, and any trace opened for inspection) in this
// Node process, behind the loopback HTTP + WebSocket server.
import { chooseFoldKernel } from '@shared/fold';
import { TopologySession } from '../lab/topology-session';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LabHost } from '../lab/lab-host';
import { TapRouter } from '../lab/tap-router';
import { AttachRouter } from '../lab/attach-router';
import { newToken } from './guard';
import { watchLifeline } from '../shell-common/lifeline';
import { defaultRendererDir, parseBrowserModeArgs, runBrowserMode } from './run-browser-mode';

// Started by `npm start`: end with it, however it ends. Exiting ends the
// ranks too (each watches its IPC channel and has a parent-death signal).
watchLifeline((why) => {
  process.stderr.write(`relay-lab web: ${why}; stopping the lab.\n`);
  process.exit(1);
});

// The fold kernel is chosen once per process, at start-up (WebAssembly SIMD where available).
chooseFoldKernel('best');
let opts;
try {
  opts = parseBrowserModeArgs(process.argv.slice(2), { rendererDir: defaultRendererDir() });
} catch (e) {
  process.stderr.write(`relay-lab web: ${(e as Error).message}\n`);
  process.exit(2);
}
const token = newToken();
const host = new LabHost(new TopologySession(), {
  tracesDir: opts.tracesDir,
  downloadUrl: (name) => `/traces/${encodeURIComponent(name)}?token=${encodeURIComponent(token)}`,
  producer: 'relay-lab browser mode',
});
// scripts/cold-start.mjs: one line when the first round's verdict is in (cold start = npm start to it).
if (process.env.RELAY_LAB_REPORT_FIRST_VERDICT === '1') {
  const detach = host.subscribe((batch) => {
    const round = batch.events.find((e) => e.type === 'round');
    if (!round) return;
    detach();
    process.stdout.write(`relay-lab: first round verdict: ${round.report.verdict}\n`);
  });
}
// Live taps and captures opened in the window (issue 14) go through the router in front of the host.
const captureDir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-captures-'));
const taps = new TapRouter(host, { tracesDir: opts.tracesDir, workDir: captureDir });
// A topology that runs elsewhere (a Slurm job's watch server) is attached in front of everything.
// Save trace while attached saves the job's trace where a local save goes (the traces folder).
const lab = new AttachRouter(taps, { saveTrace: (format, write) => host.saveTraceVia(format, write) });
try {
  await runBrowserMode(lab, { ...opts, token });
  process.stdout.write(`Traces folder: ${opts.tracesDir}\n`);
  process.on('exit', () => {
    host.removeWorkDir();
    fs.rmSync(captureDir, { recursive: true, force: true });
  });
  for (const tap of opts.taps) {
    const reply = await lab.command({ type: 'startTap', tap });
    process.stdout.write(
      reply.ok
        ? `Tap ${tap.name ? `${tap.name} ` : ''}listening on ${tap.listenHost}:${reply.taps.at(-1)?.boundPort}, upstream ${tap.upstreamHost}:${tap.upstreamPort}\n`
        : `relay-lab web: tap ${tap.listenHost}:${tap.listenPort}: ${reply.error}: ${reply.message}\n`,
    );
  }
  if (opts.attach) {
    const reply = await lab.command({ type: 'attach', ...opts.attach });
    process.stdout.write(
      reply.ok
        ? `Attached to the job at ${opts.attach.address}.\n`
        : `relay-lab web: ${reply.error}: ${reply.message}\n`,
    );
  }
  if (opts.trace) {
    // A trace that does not open leaves the live lab running, with the reason on stderr.
    await host.openFile(opts.trace).then(
      () => process.stdout.write(`Viewing trace ${opts.trace} (offline).\n`),
      (e: Error & { code?: string }) =>
        process.stderr.write(
          `relay-lab web: cannot open ${opts.trace}: ${e.code ?? 'ERROR'}: ${e.message}\n`,
        ),
    );
  }
} catch (e) {
  process.stderr.write(`relay-lab web: ${(e as Error).message}\n`);
  process.exit(1);
}
