// The narrow slice of Electron's API that the shell uses, typed here so the
// layer type-checks where the optional `electron` package is not installed.
// Only this folder touches Electron.
import type { LabBatch, LabCommand, LabReply, TraceCommand } from '@shared/lab/contract';

export interface IpcMainInvokeEventLike {
  sender: { id: number };
  /** WebFrameMain: `parent` is null for the window's main frame. */
  senderFrame: { url: string; parent?: unknown } | null;
}

export interface WebContentsLike {
  id: number;
  send(channel: string, ...args: unknown[]): void;
  isDestroyed(): boolean;
  on(
    event: 'will-navigate' | 'will-frame-navigate' | 'will-redirect' | 'will-attach-webview',
    listener: (e: { preventDefault(): void }, ...rest: unknown[]) => void,
  ): void;
  setWindowOpenHandler(handler: (details: { url: string }) => { action: 'deny' | 'allow' }): void;
}

export interface BrowserWindowLike {
  webContents: WebContentsLike;
  loadURL(url: string): Promise<void>;
  once(event: 'ready-to-show', listener: () => void): void;
  on(event: 'closed', listener: () => void): void;
  show(): void;
}

export interface SessionLike {
  setPermissionRequestHandler(
    handler: ((wc: unknown, permission: string, callback: (granted: boolean) => void) => void) | null,
  ): void;
  setPermissionCheckHandler(handler: ((wc: unknown, permission: string) => boolean) | null): void;
  webRequest: {
    onHeadersReceived(
      listener: (
        details: { responseHeaders?: Record<string, string[]> },
        callback: (response: { responseHeaders: Record<string, string[]> }) => void,
      ) => void,
    ): void;
  };
}

/** utilityProcess.fork's child: a real OS process with a parent port. */
export interface UtilityProcessLike {
  readonly pid: number | undefined;
  readonly stderr: (NodeJS.ReadableStream & { setEncoding?(enc: BufferEncoding): unknown }) | null;
  postMessage(message: unknown): void;
  kill(): boolean;
  on(event: 'spawn', listener: () => void): this;
  on(event: 'exit', listener: (code: number) => void): this;
  on(event: 'message', listener: (message: unknown) => void): this;
  on(event: 'error', listener: (type: string, location: string, report: string) => void): this;
}

export interface UtilityProcessApi {
  fork(
    modulePath: string,
    args: string[],
    options: {
      env?: NodeJS.ProcessEnv;
      stdio?: ('ignore' | 'pipe' | 'inherit')[];
      serviceName?: string;
      execArgv?: string[];
    },
  ): UtilityProcessLike;
}

export interface ElectronMain {
  app: {
    whenReady(): Promise<void>;
    on(event: 'window-all-closed' | 'before-quit', listener: () => void): void;
    on(event: 'web-contents-created', listener: (e: unknown, contents: WebContentsLike) => void): void;
    quit(): void;
    enableSandbox(): void;
    /** True in a packaged build: developer tools are then off. */
    readonly isPackaged: boolean;
  };
  BrowserWindow: new (options: object) => BrowserWindowLike;
  ipcMain: {
    handle(
      channel: string,
      handler: (event: IpcMainInvokeEventLike, ...args: unknown[]) => Promise<unknown>,
    ): void;
  };
  session: { defaultSession: SessionLike };
  utilityProcess: UtilityProcessApi;
  protocol: {
    /** Before the app is ready: what a scheme may do (standard, secure, ...). */
    registerSchemesAsPrivileged(
      schemes: readonly { scheme: string; privileges: Readonly<Record<string, boolean>> }[],
    ): void;
    /** After ready: answers every request of the scheme (the default session). */
    handle(scheme: string, handler: (request: Request) => Response | Promise<Response>): void;
  };
  dialog: {
    showSaveDialog(options: {
      title?: string;
      defaultPath?: string;
      filters?: { name: string; extensions: string[] }[];
    }): Promise<{ canceled: boolean; filePath?: string }>;
    showOpenDialog(options: {
      title?: string;
      defaultPath?: string;
      properties?: string[];
      filters?: { name: string; extensions: string[] }[];
    }): Promise<{ canceled: boolean; filePaths: string[] }>;
  };
}

export interface ElectronPreload {
  contextBridge: { exposeInMainWorld(key: string, api: unknown): void };
  ipcRenderer: {
    invoke(channel: string, ...args: unknown[]): Promise<unknown>;
    on(channel: string, listener: (event: unknown, ...args: unknown[]) => void): void;
    removeListener(channel: string, listener: (event: unknown, ...args: unknown[]) => void): void;
  };
}

/** What the preload exposes as window.relayLab: the LabApi and nothing else. */
export interface PreloadBridge {
  command(cmd: LabCommand | TraceCommand): Promise<LabReply>;
  subscribe(listener: (batch: LabBatch) => void): () => void;
}
