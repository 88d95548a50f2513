// The Content-Security-Policy of the window, for both transports. Scripts and
// styles come only from the app's own files; nothing inline, no eval, no
// plugins, no framing, no form posts. `connect` names the one WebSocket
// browser mode opens (Electron needs none: it talks over IPC).
export function contentSecurityPolicy(opts: { connect?: string[]; frameAncestors?: boolean } = {}): string {
  const connect = ["'self'", ...(opts.connect ?? [])].join(' ');
  const directives = [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    `connect-src ${connect}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "worker-src 'none'",
    "manifest-src 'none'",
  ];
  // frame-ancestors is ignored in a <meta> policy, so only HTTP headers carry it.
  if (opts.frameAncestors !== false) directives.push("frame-ancestors 'none'");
  return directives.join('; ');
}
