// Electron main: loads Electron, makes one LabSession in this process and
// hands both to the shell (shell.ts holds the wiring and the security).
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { LabSession } from '../lab/session';
import type { ElectronMain } from './electron-api';
import { installShell } from './shell';

const electron = createRequire(import.meta.url)('electron') as ElectronMain;
const { app } = electron;

const here = path.dirname(fileURLToPath(import.meta.url));
const indexHtml = path.join(here, '../renderer/index.html');

app.enableSandbox();
const lab = new LabSession();
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
});

app.on('window-all-closed', () => app.quit());
app.on('before-quit', () => void lab.command({ type: 'stop' }));
