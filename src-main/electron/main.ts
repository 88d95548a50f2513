// Electron main: loads Electron, makes the lab host (one TopologySession, its
// recording, and any trace opened for inspection) in this process and hands
// both to the shell (shell.ts holds the wiring and the security). Saving and
// opening traces go through Electron's file dialogs.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { TopologySession } from '../lab/topology-session';
import { defaultTracesDir, LabHost } from '../lab/lab-host';
import type { ElectronMain } from './electron-api';
import { installShell } from './shell';
import { parseElectronArgs } from './args';

const electron = createRequire(import.meta.url)('electron') as ElectronMain;
const { app, dialog } = electron;

const here = path.dirname(fileURLToPath(import.meta.url));
const indexHtml = path.join(here, '../renderer/index.html');
const args = parseElectronArgs(process.argv.slice(2), defaultTracesDir());

app.enableSandbox();
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
process.on('exit', () => lab.removeWorkDir());
const shell = installShell(electron, lab, {
  indexHtml,
  appUrl: pathToFileURL(indexHtml).toString(),
  preload: path.join(here, '../preload/index.cjs'),
});

void app.whenReady().then(async () => {
  await shell.createWindow();
  // With no configuration, the default topology runs.
  const reply = await lab.command({ type: 'start' });
  if (!reply.ok) process.stderr.write(`relay-lab: the default topology did not start: ${reply.message}\n`);
  if (args.trace)
    await lab
      .openFile(args.trace)
      .catch((e: Error & { code?: string }) =>
        process.stderr.write(`relay-lab: cannot open ${args.trace}: ${e.code ?? 'ERROR'}: ${e.message}\n`),
      );
});

app.on('window-all-closed', () => app.quit());
app.on('before-quit', () => void lab.command({ type: 'stop' }));
