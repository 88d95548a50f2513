import { describe, it, expect } from 'vitest';
import { windowOptions, ELECTRON_CSP, senderAllowed, navigationAllowed, permissionAllowed } from './security';

describe('Electron shell security settings', () => {
  it('isolates and sandboxes the renderer, with no Node and no webviews', () => {
    const w = windowOptions('/app/out/preload/index.cjs').webPreferences;
    expect(w.contextIsolation).toBe(true);
    expect(w.sandbox).toBe(true);
    expect(w.nodeIntegration).toBe(false);
    expect(w.nodeIntegrationInWorker).toBe(false);
    expect(w.nodeIntegrationInSubFrames).toBe(false);
    expect(w.webSecurity).toBe(true);
    expect(w.allowRunningInsecureContent).toBe(false);
    expect(w.webviewTag).toBe(false);
    expect(w.navigateOnDragDrop).toBe(false);
    expect(w.preload).toBe('/app/out/preload/index.cjs');
    // Developer tools: off unless asked for (a development build).
    expect(w.devTools).toBe(false);
    expect(windowOptions('/p', { devTools: true }).webPreferences.devTools).toBe(true);
  });

  it('has a strict CSP: own scripts and styles only, nothing inline, no eval, no framing', () => {
    const directives = Object.fromEntries(
      ELECTRON_CSP.split(';')
        .map((d) => d.trim().split(/\s+/))
        .map(([k, ...v]) => [k, v]),
    );
    expect(directives['default-src']).toEqual(["'none'"]);
    expect(directives['script-src']).toEqual(["'self'"]);
    expect(directives['style-src']).toEqual(["'self'"]);
    expect(directives['object-src']).toEqual(["'none'"]);
    expect(directives['frame-ancestors']).toEqual(["'none'"]);
    expect(ELECTRON_CSP).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
  });

  it('honours IPC only from the lab window main frame on the app page', () => {
    const trusted = { windowId: 7, appUrl: 'app://relay-lab/index.html' };
    expect(senderAllowed({ senderId: 7, frameUrl: 'app://relay-lab/index.html' }, trusted)).toBe(true);
    expect(senderAllowed({ senderId: 7, frameUrl: 'app://relay-lab/index.html#x' }, trusted)).toBe(true);
    expect(senderAllowed({ senderId: 8, frameUrl: 'app://relay-lab/index.html' }, trusted)).toBe(false);
    expect(senderAllowed({ senderId: 7, frameUrl: 'https://evil.example/' }, trusted)).toBe(false);
    expect(senderAllowed({ senderId: 7, frameUrl: 'file:///tmp/evil.html' }, trusted)).toBe(false);
    // The same page from another origin (file://, another app:// host) is not the app.
    expect(senderAllowed({ senderId: 7, frameUrl: 'file:///relay-lab/index.html' }, trusted)).toBe(false);
    expect(senderAllowed({ senderId: 7, frameUrl: 'app://evil/index.html' }, trusted)).toBe(false);
    expect(senderAllowed({ senderId: 7, frameUrl: null }, trusted)).toBe(false);
    expect(senderAllowed({ senderId: 7, frameUrl: 'not a url' }, trusted)).toBe(false);
    expect(senderAllowed({ senderId: 7, frameUrl: trusted.appUrl }, { ...trusted, windowId: null })).toBe(
      false,
    );
  });

  it('denies every navigation, new window and permission', () => {
    for (const url of ['https://example.com', 'file:///etc/passwd', 'javascript:alert(1)'])
      expect(navigationAllowed(url)).toBe(false);
    for (const p of ['media', 'notifications', 'clipboard-read', 'geolocation', 'openExternal'])
      expect(permissionAllowed(p)).toBe(false);
  });
});
