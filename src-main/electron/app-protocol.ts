// The window's page comes from a custom privileged protocol, app://relay-lab/,
// not file://: a file:// page may read any file:// URL, shares its origin
// with every local file, and cannot carry response headers. app:// is a
// standard, secure scheme (relative URLs, a real origin, a secure context)
// that serves only the built renderer: no path out of its folder, no
// symbolic link below it (readStatic), every response with the CSP.
import { readStatic } from '../shell-common/static-files';
import { ELECTRON_CSP } from './security';

export const APP_SCHEME = 'app';
export const APP_HOST = 'relay-lab';
/** The window's page: the only URL whose IPC is honoured. */
export const APP_URL = `${APP_SCHEME}://${APP_HOST}/index.html`;

/** For protocol.registerSchemesAsPrivileged, before the app is ready. */
export const APP_SCHEME_PRIVILEGES = {
  scheme: APP_SCHEME,
  privileges: {
    standard: true,
    secure: true,
    supportFetchAPI: true,
    // The page's CSP must apply: never bypassed.
    bypassCSP: false,
    corsEnabled: false,
    stream: false,
    allowServiceWorkers: false,
  },
} as const;

export interface AppResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer | string;
}

const COMMON_HEADERS = {
  'Content-Security-Policy': ELECTRON_CSP,
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-store',
};

/** Answers one app:// request from the renderer folder. */
export function serveAppRequest(rendererDir: string, requestUrl: string, method = 'GET'): AppResponse {
  const refuse = (status: number, why: string): AppResponse => ({
    status,
    headers: { ...COMMON_HEADERS, 'Content-Type': 'text/plain; charset=utf-8' },
    body: why,
  });
  if (method !== 'GET' && method !== 'HEAD') return refuse(405, 'method not allowed');
  let url: URL;
  try {
    url = new URL(requestUrl);
  } catch {
    return refuse(400, 'bad URL');
  }
  if (url.protocol !== `${APP_SCHEME}:` || url.host !== APP_HOST) return refuse(404, 'not found');
  // The raw path, still percent-encoded: readStatic decodes once and judges what it resolves to.
  const file = readStatic(rendererDir, url.pathname === '/' ? '/index.html' : url.pathname);
  if (!file) return refuse(404, 'not found');
  return {
    status: 200,
    headers: { ...COMMON_HEADERS, 'Content-Type': file.type },
    body: method === 'HEAD' ? '' : file.body,
  };
}
