// The shell's security settings, as plain values and pure functions so tests
// can check them without Electron.
import { contentSecurityPolicy } from '@shared/lab/csp';

/**
 * BrowserWindow options: renderer isolated and sandboxed, no Node, no webviews.
 * Developer tools only in a development build (a packaged app has no use for them).
 */
export function windowOptions(preloadPath: string, opts: { devTools?: boolean } = {}) {
  return {
    width: 1600,
    height: 1000,
    minWidth: 1100,
    minHeight: 700,
    show: false,
    backgroundColor: '#0f1216',
    title: 'Relay Lab',
    autoHideMenuBar: true,
    webPreferences: {
      preload: preloadPath,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      experimentalFeatures: false,
      navigateOnDragDrop: false,
      spellcheck: false,
      devTools: opts.devTools ?? false,
    },
  } as const;
}

/** The CSP sent with the window's files (IPC needs no connect-src beyond 'self'). */
export const ELECTRON_CSP = contentSecurityPolicy();

function withoutQueryOrHash(url: string): string | null {
  try {
    const u = new URL(url);
    u.hash = '';
    u.search = '';
    return u.toString();
  } catch {
    return null;
  }
}

/**
 * An IPC message is honoured only from the lab's own window, from its main
 * frame's page (the app's index.html): not from another window, a subframe,
 * or a page the window was somehow navigated to.
 */
export function senderAllowed(
  sender: { senderId: number; frameUrl: string | null | undefined },
  trusted: { windowId: number | null; appUrl: string },
): boolean {
  if (trusted.windowId === null || sender.senderId !== trusted.windowId) return false;
  if (!sender.frameUrl) return false;
  const got = withoutQueryOrHash(sender.frameUrl);
  return got !== null && got === withoutQueryOrHash(trusted.appUrl);
}

/** Every navigation away from the app is denied; new windows too. */
export function navigationAllowed(_url: string): boolean {
  return false;
}

/** No permission (camera, notifications, clipboard, ...) is ever granted. */
export function permissionAllowed(_permission: string): boolean {
  return false;
}
