// The shell's wiring against a recording stand-in for Electron's API (the
// Electron binary is absent here; e2e/electron.e2e.test.ts drives the real
// one where it is installed). The lab is a recording LabApi.
import { describe, it, expect } from 'vitest';
import type { AnyCommand, LabApi, LabBatch, LabReply } from '@shared/lab/contract';
import type { ElectronMain, IpcMainInvokeEventLike, WebContentsLike } from './electron-api';
import { installShell } from './shell';
import { COMMAND_CHANNEL, EVENTS_CHANNEL } from './channels';

class RecordingLab implements LabApi {
  commands: AnyCommand[] = [];
  listeners = new Set<(b: LabBatch) => void>();
  async command(cmd: AnyCommand): Promise<LabReply> {
    this.commands.push(cmd);
    return { ok: true };
  }
  subscribe(l: (b: LabBatch) => void) {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
}

function fakeElectron() {
  const appHandlers = new Map<string, (...a: never[]) => void>();
  const ipc = new Map<string, (event: IpcMainInvokeEventLike, ...args: unknown[]) => Promise<unknown>>();
  const sent: { channel: string; args: unknown[] }[] = [];
  const windows: { options: Record<string, unknown>; loaded: string; handlers: Map<string, () => void> }[] =
    [];
  const privileged: { scheme: string; privileges: Readonly<Record<string, boolean>> }[] = [];
  const protocols = new Map<string, (request: Request) => Response | Promise<Response>>();
  let ready = false;
  let permissionRequest: ((wc: unknown, p: string, cb: (g: boolean) => void) => void) | null = null;
  let permissionCheck: ((wc: unknown, p: string) => boolean) | null = null;
  const contentsOf = (id: number): WebContentsLike => ({
    id,
    send: (channel, ...args) => sent.push({ channel, args }),
    isDestroyed: () => false,
    on: () => {},
    setWindowOpenHandler: () => {},
  });
  const electron: ElectronMain = {
    app: {
      whenReady: async () => {
        ready = true;
      },
      on: (event: string, listener: (...a: never[]) => void) => void appHandlers.set(event, listener),
      quit: () => {},
      enableSandbox: () => {},
      isPackaged: true,
    } as ElectronMain['app'],
    // main.ts sets the rank spawner from it; the shell itself never uses it.
    utilityProcess: {} as ElectronMain['utilityProcess'],
    // The shell never opens a dialog (main.ts does, for traces).
    dialog: {} as ElectronMain['dialog'],
    BrowserWindow: class {
      webContents = contentsOf(41);
      private readonly record: (typeof windows)[number];
      constructor(options: object) {
        this.record = { options: options as Record<string, unknown>, loaded: '', handlers: new Map() };
        windows.push(this.record);
      }
      async loadURL(url: string) {
        this.record.loaded = url;
      }
      once(event: string, l: () => void) {
        this.record.handlers.set(event, l);
      }
      on(event: string, l: () => void) {
        this.record.handlers.set(event, l);
      }
      show() {}
    },
    ipcMain: { handle: (channel, handler) => void ipc.set(channel, handler) },
    protocol: {
      registerSchemesAsPrivileged: (schemes) => {
        // Electron throws when this comes after ready.
        if (ready) throw new Error('registerSchemesAsPrivileged after ready');
        privileged.push(...schemes);
      },
      handle: (scheme, handler) => {
        if (protocols.has(scheme)) throw new Error(`scheme ${scheme} handled twice`);
        protocols.set(scheme, handler);
      },
    },
    session: {
      defaultSession: {
        setPermissionRequestHandler: (h) => void (permissionRequest = h),
        setPermissionCheckHandler: (h) => void (permissionCheck = h),
        webRequest: { onHeadersReceived: () => {} },
      },
    },
  };
  return {
    electron,
    appHandlers,
    ipc,
    sent,
    windows,
    privileged,
    protocols,
    permission: () => ({ permissionRequest, permissionCheck }),
  };
}

const paths = {
  rendererDir: '/app/out/renderer',
  preload: '/app/out/preload/index.cjs',
};
const appUrl = 'app://relay-lab/index.html';

describe('Electron shell wiring', () => {
  it('creates one sandboxed window on the app page and denies permissions', async () => {
    const f = fakeElectron();
    const shell = installShell(f.electron, new RecordingLab(), paths);
    await shell.createWindow();
    expect(f.windows).toHaveLength(1);
    // The page comes from the privileged app:// scheme, not file://.
    expect(f.windows[0].loaded).toBe(appUrl);
    expect(f.privileged).toEqual([
      expect.objectContaining({
        scheme: 'app',
        privileges: expect.objectContaining({ standard: true, secure: true, bypassCSP: false }),
      }),
    ]);
    expect([...f.protocols.keys()]).toEqual(['app']);
    // The handler answers through a real Response: this stand-in's renderer folder does not exist.
    const res = await f.protocols.get('app')!(new Request(appUrl));
    expect(res.status).toBe(404);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    // A second window reuses the handler (protocol.handle throws on a second registration).
    await shell.createWindow();
    expect(f.windows[0].options.webPreferences).toMatchObject({
      sandbox: true,
      contextIsolation: true,
      nodeIntegration: false,
      preload: paths.preload,
      // The stand-in app is packaged: no developer tools.
      devTools: false,
    });
    const { permissionRequest, permissionCheck } = f.permission();
    const granted: boolean[] = [];
    permissionRequest!(null, 'media', (g) => granted.push(g));
    expect(granted).toEqual([false]);
    expect(permissionCheck!(null, 'notifications')).toBe(false);
  });

  it('prevents navigation and denies new windows in every web contents', () => {
    const f = fakeElectron();
    installShell(f.electron, new RecordingLab(), paths);
    const handlers = new Map<string, (e: { preventDefault(): void }) => void>();
    let openHandler: ((d: { url: string }) => { action: string }) | null = null;
    const contents = {
      id: 9,
      send: () => {},
      isDestroyed: () => false,
      on: (event: string, l: (e: { preventDefault(): void }) => void) => void handlers.set(event, l),
      setWindowOpenHandler: (h: (d: { url: string }) => { action: string }) => void (openHandler = h),
    };
    (f.appHandlers.get('web-contents-created') as unknown as (e: unknown, c: unknown) => void)(
      null,
      contents,
    );
    for (const event of ['will-navigate', 'will-frame-navigate', 'will-redirect', 'will-attach-webview']) {
      let prevented = false;
      handlers.get(event)!({ preventDefault: () => (prevented = true) });
      expect(prevented, event).toBe(true);
    }
    expect(openHandler!({ url: 'https://example.com' })).toEqual({ action: 'deny' });
  });

  it('honours IPC only from the window page, validates commands, and forwards good ones', async () => {
    const f = fakeElectron();
    const lab = new RecordingLab();
    const shell = installShell(f.electron, lab, paths);
    const handler = f.ipc.get(COMMAND_CHANNEL)!;
    const fromApp = { sender: { id: 41 }, senderFrame: { url: appUrl } };
    // Before the window exists nobody is trusted.
    expect(await handler(fromApp, { type: 'stop' })).toMatchObject({ ok: false, error: 'FORBIDDEN' });
    await shell.createWindow();
    expect(
      await handler({ sender: { id: 99 }, senderFrame: { url: appUrl } }, { type: 'stop' }),
    ).toMatchObject({ error: 'FORBIDDEN' });
    expect(
      await handler({ sender: { id: 41 }, senderFrame: { url: 'https://evil.example/' } }, { type: 'stop' }),
    ).toMatchObject({ error: 'FORBIDDEN' });
    expect(await handler({ sender: { id: 41 }, senderFrame: null }, { type: 'stop' })).toMatchObject({
      error: 'FORBIDDEN',
    });
    // A subframe showing the app page is still not the window's page.
    expect(
      await handler(
        { sender: { id: 41 }, senderFrame: { url: appUrl, parent: { url: appUrl } } },
        { type: 'stop' },
      ),
    ).toMatchObject({ error: 'FORBIDDEN' });
    expect(lab.commands).toEqual([]);
    expect(await handler(fromApp, { type: 'killRank', rank: -4 })).toMatchObject({
      ok: false,
      error: 'BAD_COMMAND',
    });
    expect(await handler(fromApp, { type: 'killRank', rank: 4 })).toEqual({ ok: true });
    expect(lab.commands).toEqual([{ type: 'killRank', rank: 4 }]);
  });

  it('sends the lab events to the window batched, and stops when the window closes', async () => {
    const f = fakeElectron();
    const lab = new RecordingLab();
    const shell = installShell(f.electron, lab, paths);
    await shell.createWindow();
    for (let i = 0; i < 100; i++)
      for (const l of lab.listeners) l({ events: [{ type: 'log', level: 'info', message: `m${i}` }] });
    await expect.poll(() => f.sent.length).toBeGreaterThan(0);
    const events = f.sent.flatMap((s) => (s.args[0] as LabBatch).events);
    await expect.poll(() => f.sent.flatMap((s) => (s.args[0] as LabBatch).events).length).toBe(100);
    expect(f.sent.every((s) => s.channel === EVENTS_CHANNEL)).toBe(true);
    // A hundred session batches in one burst reach the window as far fewer messages.
    expect(f.sent.length).toBeLessThan(10);
    expect(events[0]).toEqual({ type: 'log', level: 'info', message: 'm0' });
    f.windows[0].handlers.get('closed')!();
    expect(lab.listeners.size).toBe(0);
    expect(shell.window()).toBeNull();
  });
});
