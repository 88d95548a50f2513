// Electron main: loads Electron, makes the lab host (one TopologySession, its
// recording, and any trace opened for inspection) in this process and hands
// both to the shell (shell.ts holds the wiring and the security). Saving and
// opening traces go through Electron's file dialogs.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { tapsOfFlags } from '@shared/lab/tap-spec';
import { AttachRouter } from '../lab/attach-router';
import { TapRouter } from '../lab/tap-router';
import { fileURLToPath } from 'node:url';
import { chooseFoldKernel } from '@shared/fold';
import { TopologySession } from '../lab/topology-session';
import { defaultTracesDir, LabHost } from '../lab/lab-host';
import type { ElectronMain } from './electron-api';
import { installShell } from './shell';
import { parseElectronArgs } from './args';
import { watchLifeline } from '../shell-common/lifeline';
import { setRankSpawner } from '../engine/rank-spawner';
import { utilityRankSpawner } from './utility-rank-spawner';

const electron = createRequire(import.meta.url)('electron') as ElectronMain;
const { app, dialog } = electron;

const here = path.dirname(fileURLToPath(import.meta.url));
const rendererDir = path.join(here, '../renderer');
// Started by `npm start`: end with it, however it ends (the window, the
// ranks and every Chromium child process end with this main process).
watchLifeline((why) => {
  process.stderr.write(`relay-lab: ${why}; stopping the lab.\n`);
  process.exit(1);
});

const args = parseElectronArgs(process.argv.slice(2), defaultTracesDir());
let taps: ReturnType<typeof tapsOfFlags> = [];
try {
  taps = tapsOfFlags(args.tapFlags ?? [], args.salt);
} catch (e) {
  process.stderr.write(`relay-lab: ${(e as Error).message}\n`);
  process.exit(2);
}

app.enableSandbox();
// Ranks are Electron utility processes: no ELECTRON_RUN_AS_NODE, so the RunAsNode fuse can be off.
setRankSpawner(utilityRankSpawner(electron.utilityProcess));
const lab = new LabHost(new TopologySession(), {
  tracesDir: args.tracesDir,
  producer: 'relay-lab electron',
  async chooseSavePath(suggested) {
    const ext = suggested.endsWith('.pcapng') ? 'pcapng' : 'ndjson';
    const r = await dialog.showSaveDialog({
      title: ext === 'pcapng' ? 'Export pcapng' : 'Save trace',
      defaultPath: path.join(args.tracesDir, suggested),
      filters: [{ name: ext === 'pcapng' ? 'pcapng capture' : 'Relay Lab trace', extensions: [ext] }],
    });
    return r.canceled || !r.filePath ? null : r.filePath;
  },
  async chooseOpenPath() {
    const r = await dialog.showOpenDialog({
      title: 'Open trace',
      defaultPath: args.tracesDir,
      properties: ['openFile'],
      filters: [{ name: 'Relay Lab trace', extensions: ['ndjson'] }],
    });
    return r.canceled ? null : (r.filePaths[0] ?? null);
  },
});
// Live taps and captures opened in the window (issue 14) go through the router in front of the host.
const captureDir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-captures-'));
const router = new TapRouter(lab, {
  tracesDir: args.tracesDir,
  workDir: captureDir,
  async chooseCapturePath() {
    const r = await dialog.showOpenDialog({
      title: 'Open capture',
      defaultPath: args.tracesDir,
      properties: ['openFile'],
      filters: [{ name: 'pcap or pcapng capture', extensions: ['pcap', 'pcapng', 'cap'] }],
    });
    return r.canceled ? null : (r.filePaths[0] ?? null);
  },
});
process.on('exit', () => {
  lab.removeWorkDir();
  fs.rmSync(captureDir, { recursive: true, force: true });
});
// A topology that runs elsewhere (a Slurm job's watch server) is attached in front of everything.
// Save trace while attached saves the job's trace where a local save goes (the same dialog).
const front = new AttachRouter(router, { saveTrace: (format, write) => lab.saveTraceVia(format, write) });
const shell = installShell(electron, front, {
  rendererDir,
  preload: path.join(here, '../preload/index.cjs'),
});

// The fold kernel is chosen once per process, at start-up (WebAssembly SIMD where available).
chooseFoldKernel('best');

void app.whenReady().then(async () => {
  await shell.createWindow();
  if (args.attach) {
    // The window watches the job: no topology of its own at launch.
    const r = await front.command({ type: 'attach', ...args.attach });
    if (!r.ok) process.stderr.write(`relay-lab: ${r.error}: ${r.message}\n`);
    return;
  }
  // With no configuration, the default topology runs.
  const reply = await lab.command({ type: 'start' });
  if (!reply.ok) process.stderr.write(`relay-lab: the default topology did not start: ${reply.message}\n`);
  if (args.trace)
    await lab
      .openFile(args.trace)
      .catch((e: Error & { code?: string }) =>
        process.stderr.write(`relay-lab: cannot open ${args.trace}: ${e.code ?? 'ERROR'}: ${e.message}\n`),
      );
  for (const tap of taps) {
    const r = await router.command({ type: 'startTap', tap });
    if (!r.ok)
      process.stderr.write(`relay-lab: tap ${tap.listenHost}:${tap.listenPort}: ${r.error}: ${r.message}\n`);
  }
});

app.on('window-all-closed', () => app.quit());
app.on('before-quit', () => void lab.command({ type: 'stop' }));
