// Who may talk to browser mode: only a page this process served, on the
// loopback address it listens on, holding this launch's token. The Host check
// defeats DNS rebinding; the Origin check defeats other local pages; the
// token defeats other local users and processes that cannot read our stdout.
import { timingSafeEqual, randomBytes } from 'node:crypto';

export function newToken(): string {
  return randomBytes(24).toString('base64url');
}

export function expectedHost(port: number): string {
  return `127.0.0.1:${port}`;
}

export function expectedOrigin(port: number): string {
  return `http://127.0.0.1:${port}`;
}

/** The Host header must name exactly the address we listen on. */
export function hostAllowed(host: string | undefined, port: number): boolean {
  return host === expectedHost(port);
}

/** Browsers always send Origin on a WebSocket upgrade; it must be our own page. */
export function originAllowed(origin: string | undefined, port: number): boolean {
  return origin === expectedOrigin(port);
}

/** Constant-time comparison of the token a request presents with ours. */
export function tokenMatches(presented: string | null | undefined, token: string): boolean {
  if (typeof presented !== 'string') return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}
