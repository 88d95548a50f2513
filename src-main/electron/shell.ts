// The Electron shell's wiring, given Electron's API and a lab: security
// handlers on every web contents, the one window, the IPC command handler
// with its sender check and validation, and the batched event stream. Kept
// apart from main.ts (which only loads Electron) so it can be exercised
// where the Electron binary is absent.
import type { LabApi, LabReply } from '@shared/lab/contract';
import { validateLabCommand, badCommandReply } from '@shared/lab/validate';
import { FrameBatcher } from '../lab/frame-batcher';
import type { ElectronMain, BrowserWindowLike } from './electron-api';
import { COMMAND_CHANNEL, EVENTS_CHANNEL } from './channels';
import { APP_SCHEME, APP_SCHEME_PRIVILEGES, APP_URL, serveAppRequest } from './app-protocol';
import { windowOptions, ELECTRON_CSP, senderAllowed, navigationAllowed, permissionAllowed } from './security';

export interface ShellPaths {
  /** The built renderer (index.html and assets/), served as app://relay-lab/. */
  rendererDir: string;
  preload: string;
}

export interface Shell {
  createWindow(): Promise<BrowserWindowLike>;
  window(): BrowserWindowLike | null;
}

export function installShell(electron: ElectronMain, lab: LabApi, paths: ShellPaths): Shell {
  const { app, BrowserWindow, ipcMain, session, protocol } = electron;
  let win: BrowserWindowLike | null = null;
  let protocolHandled = false;

  // Only possible before the app is ready: app:// is a standard, secure scheme.
  protocol.registerSchemesAsPrivileged([APP_SCHEME_PRIVILEGES]);

  // Applies to every web contents ever created, including any a bug might open.
  app.on('web-contents-created', (_e, contents) => {
    contents.on('will-navigate', (e) => e.preventDefault());
    // will-navigate covers only the main frame (Electron 25+); subframes navigate here.
    contents.on('will-frame-navigate', (e) => e.preventDefault());
    contents.on('will-redirect', (e) => e.preventDefault());
    contents.on('will-attach-webview', (e) => e.preventDefault());
    contents.setWindowOpenHandler(({ url }) => ({ action: navigationAllowed(url) ? 'allow' : 'deny' }));
  });

  ipcMain.handle(COMMAND_CHANNEL, async (event, raw): Promise<LabReply> => {
    const trusted = { windowId: win?.webContents.id ?? null, appUrl: APP_URL };
    const fromSubframe = event.senderFrame?.parent != null;
    if (
      fromSubframe ||
      !senderAllowed({ senderId: event.sender.id, frameUrl: event.senderFrame?.url }, trusted)
    ) {
      return { ok: false, error: 'FORBIDDEN', message: 'IPC from an untrusted sender' };
    }
    try {
      return await lab.command(validateLabCommand(raw));
    } catch (e) {
      return badCommandReply(e);
    }
  });

  async function createWindow(): Promise<BrowserWindowLike> {
    if (!protocolHandled) {
      protocolHandled = true;
      protocol.handle(APP_SCHEME, (request) => {
        const r = serveAppRequest(paths.rendererDir, request.url, request.method);
        return new Response(typeof r.body === 'string' ? r.body : new Uint8Array(r.body), {
          status: r.status,
          headers: r.headers,
        });
      });
    }
    const ses = session.defaultSession;
    ses.setPermissionRequestHandler((_wc, permission, callback) => callback(permissionAllowed(permission)));
    ses.setPermissionCheckHandler((_wc, permission) => permissionAllowed(permission));
    ses.webRequest.onHeadersReceived((details, callback) => {
      callback({
        responseHeaders: { ...(details.responseHeaders ?? {}), 'Content-Security-Policy': [ELECTRON_CSP] },
      });
    });

    const created = new BrowserWindow(windowOptions(paths.preload, { devTools: !app.isPackaged }));
    win = created;
    const contents = created.webContents;
    const batcher = new FrameBatcher((batch) => {
      if (!contents.isDestroyed()) contents.send(EVENTS_CHANNEL, batch);
    });
    const unsubscribe = lab.subscribe((batch) => batcher.push(batch));
    created.on('closed', () => {
      unsubscribe();
      batcher.close();
      if (win === created) win = null;
    });
    created.once('ready-to-show', () => created.show());
    await created.loadURL(APP_URL);
    return created;
  }

  return { createWindow, window: () => win };
}
