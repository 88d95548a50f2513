// Electron main: one window onto a LabSession that runs in this process.
// Thin by design: security settings come from security.ts, commands are
// validated as untrusted input, and events reach the window batched (at most
// one message per frame).
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { LabSession } from '../lab/session';
import { validateLabCommand, badCommandReply } from '@shared/lab/validate';
import { FrameBatcher } from '../web/batcher';
import type { ElectronMain, BrowserWindowLike } from './electron-api';
import { COMMAND_CHANNEL, EVENTS_CHANNEL } from './channels';
import { windowOptions, ELECTRON_CSP, senderAllowed, navigationAllowed, permissionAllowed } from './security';

const { app, BrowserWindow, ipcMain, session } = createRequire(import.meta.url)('electron') as ElectronMain;

const here = path.dirname(fileURLToPath(import.meta.url));
const indexHtml = path.join(here, '../renderer/index.html');
const appUrl = pathToFileURL(indexHtml).toString();
const preload = path.join(here, '../preload/index.cjs');

app.enableSandbox();
const lab = new LabSession();
let win: BrowserWindowLike | null = null;

// Applies to every web contents ever created, including any a bug might open.
app.on('web-contents-created', (_e, contents) => {
  contents.on('will-navigate', (e) => e.preventDefault());
  contents.on('will-redirect', (e) => e.preventDefault());
  contents.on('will-attach-webview', (e) => e.preventDefault());
  contents.setWindowOpenHandler(({ url }) => ({ action: navigationAllowed(url) ? 'allow' : 'deny' }));
});

ipcMain.handle(COMMAND_CHANNEL, async (event, raw) => {
  if (
    !senderAllowed(
      { senderId: event.sender.id, frameUrl: event.senderFrame?.url },
      { windowId: win?.webContents.id ?? null, appUrl },
    )
  ) {
    return { ok: false, error: 'FORBIDDEN', message: 'IPC from an untrusted sender' };
  }
  try {
    return await lab.command(validateLabCommand(raw));
  } catch (e) {
    return badCommandReply(e);
  }
});

async function createWindow(): Promise<void> {
  const ses = session.defaultSession;
  ses.setPermissionRequestHandler((_wc, permission, callback) => callback(permissionAllowed(permission)));
  ses.setPermissionCheckHandler((_wc, permission) => permissionAllowed(permission));
  ses.webRequest.onHeadersReceived((details, callback) => {
    callback({
      responseHeaders: { ...(details.responseHeaders ?? {}), 'Content-Security-Policy': [ELECTRON_CSP] },
    });
  });

  win = new BrowserWindow(windowOptions(preload));
  const contents = win.webContents;
  const batcher = new FrameBatcher((batch) => {
    if (!contents.isDestroyed()) contents.send(EVENTS_CHANNEL, batch);
  });
  const unsubscribe = lab.subscribe((batch) => batcher.push(batch));
  win.on('closed', () => {
    unsubscribe();
    batcher.close();
    win = null;
  });
  win.once('ready-to-show', () => win?.show());
  await win.loadFile(indexHtml);
}

void app.whenReady().then(async () => {
  await createWindow();
  const reply = await lab.command({ type: 'start' });
  if (!reply.ok) process.stderr.write(`relay-lab: the default topology did not start: ${reply.message}\n`);
});

app.on('window-all-closed', () => app.quit());
app.on('before-quit', () => void lab.command({ type: 'stop' }));
