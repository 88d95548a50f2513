// Browser mode's server: the built renderer over HTTP and the lab contract
// over one WebSocket, on 127.0.0.1 only, at a free port. Every request must
// carry the right Host; the page and the WebSocket also need this launch's
// token, and the WebSocket an Origin of our own page.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { LabApi, LabReply } from '@shared/lab/contract';
import { validateLabCommand, badCommandReply } from '@shared/lab/validate';
import { contentSecurityPolicy } from '@shared/lab/csp';
import { newToken, hostAllowed, originAllowed, tokenMatches, expectedOrigin } from './guard';
import { readStatic } from '../shell-common/static-files';
import { tokenPage } from './token-page';
import { FrameBatcher } from '../lab/frame-batcher';
import { handleTraceFiles } from './trace-files';
import { MAX_CLIENT_MESSAGE, MAX_PENDING_COMMANDS, MAX_SOCKET_BACKLOG, type ServerMessage } from './protocol';

export interface WebServerOptions {
  api: LabApi;
  /** Folder of the built renderer (index.html and assets/). */
  rendererDir: string;
  /** 0 (default) picks a free port. */
  port?: number;
  token?: string;
  /** The traces folder: saved traces are downloaded from it and uploads land in it (GET/POST /traces). */
  tracesDir?: string;
  /** The largest trace upload (default MAX_UPLOAD_BYTES). */
  maxUploadBytes?: number;
}

export interface WebServer {
  url: string;
  port: number;
  token: string;
  close(): Promise<void>;
}

export async function startWebServer(opts: WebServerOptions): Promise<WebServer> {
  const token = opts.token ?? newToken();
  const server = http.createServer();
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_CLIENT_MESSAGE });
  let port = 0;
  const uploads = { active: 0 };

  const securityHeaders = (): Record<string, string> => ({
    'Content-Security-Policy': contentSecurityPolicy({ connect: [`ws://127.0.0.1:${port}`] }),
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'X-Frame-Options': 'DENY',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Resource-Policy': 'same-origin',
    'Cache-Control': 'no-store',
  });

  const refuse = (res: http.ServerResponse, status: number, why: string): void => {
    res.writeHead(status, { ...securityHeaders(), 'Content-Type': 'text/plain; charset=utf-8' });
    res.end(why + '\n');
  };

  server.on('request', (req, res) => {
    // A throw here would be an uncaught exception that ends the whole lab.
    try {
      onRequest(req, res);
    } catch (e) {
      if (!res.headersSent) refuse(res, 500, 'internal error');
      else res.destroy();
      process.stderr.write(`relay-lab web: request failed: ${e instanceof Error ? e.message : String(e)}\n`);
    }
  });

  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    if (!hostAllowed(req.headers.host, port)) return refuse(res, 403, 'forbidden: wrong Host');
    const url = requestUrl(req.url, port);
    if (!url) return refuse(res, 400, 'bad request target');
    if (
      opts.tracesDir &&
      handleTraceFiles(req, res, url, {
        tracesDir: opts.tracesDir,
        token,
        port,
        headers: securityHeaders,
        maxUploadBytes: opts.maxUploadBytes,
        uploads,
      })
    )
      return;
    if (req.method !== 'GET' && req.method !== 'HEAD') return refuse(res, 405, 'method not allowed');
    const file = readStatic(opts.rendererDir, url.pathname === '/' ? '/index.html' : url.pathname);
    // The page needs the token; its scripts and styles are the public app code.
    // Judged on the file resolved, so no spelling (/%69ndex.html, /index.html/) skips it.
    if (file?.relPath === 'index.html' && !tokenMatches(url.searchParams.get('token'), token)) {
      // A person opened the lab without the printed URL: tell them where it is.
      const page = tokenPage({ port, presented: url.searchParams.has('token') });
      res.writeHead(403, {
        ...securityHeaders(),
        'Content-Type': 'text/html; charset=utf-8',
        'Content-Length': Buffer.byteLength(page),
      });
      res.end(req.method === 'HEAD' ? undefined : page);
      return;
    }
    if (!file) return refuse(res, 404, 'not found');
    res.writeHead(200, {
      ...securityHeaders(),
      'Content-Type': file.type,
      'Content-Length': file.body.length,
    });
    res.end(req.method === 'HEAD' ? undefined : file.body);
  };

  server.on('upgrade', (req, socket: Duplex, head) => {
    socket.on('error', () => socket.destroy());
    const url = requestUrl(req.url, port);
    const reason =
      url?.pathname !== '/ws'
        ? '404 Not Found'
        : !hostAllowed(req.headers.host, port)
          ? '403 Forbidden'
          : !originAllowed(req.headers.origin, port)
            ? '403 Forbidden'
            : !tokenMatches(url?.searchParams.get('token'), token)
              ? '403 Forbidden'
              : null;
    if (reason) {
      socket.end(`HTTP/1.1 ${reason}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => serveClient(ws, opts.api));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}/?token=${token}`,
    port,
    token,
    async close() {
      for (const ws of wss.clients) ws.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * The request target as a URL on our origin, or null when it does not parse
 * (an absolute-form target such as `http://[` makes `new URL` throw). Only
 * origin-form targets (`/path?query`) are accepted: a browser sends nothing
 * else to an origin server.
 */
export function requestUrl(target: string | undefined, port: number): URL | null {
  if (typeof target !== 'string' || !target.startsWith('/') || target.startsWith('//')) return null;
  try {
    return new URL(target, expectedOrigin(port));
  } catch {
    return null;
  }
}

export function serveClient(ws: WebSocket, api: LabApi): void {
  const send = (msg: ServerMessage): void => {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(msg));
  };
  const batcher = new FrameBatcher(
    (batch) => send({ type: 'batch', batch }),
    () => ws.bufferedAmount > MAX_SOCKET_BACKLOG,
  );
  const unsubscribe = api.subscribe((batch) => batcher.push(batch));
  // A fresh client starts from the whole picture, then follows the diffs.
  void api.command({ type: 'snapshot' }).then((reply) => {
    if (reply.ok && reply.snapshot)
      batcher.push({ events: [{ type: 'snapshot', snapshot: reply.snapshot }] });
  });

  let pending = 0;
  ws.on('message', (data, isBinary) => {
    const parsed = parseClientMessage(isBinary ? null : data.toString());
    if ('error' in parsed) return send(parsed);
    const busy = busyReason(pending, ws.bufferedAmount);
    if (busy)
      return send({ type: 'reply', id: parsed.id, reply: { ok: false, error: 'BUSY', message: busy } });
    pending++;
    void runCommand(api, parsed.command).then((reply) => {
      pending--;
      send({ type: 'reply', id: parsed.id, reply });
    });
  });
  ws.on('close', () => {
    unsubscribe();
    batcher.close();
  });
  ws.on('error', () => ws.terminate());
}

/**
 * Why a client's next command is refused before it runs, or null. A client
 * that floods commands, or stops reading its replies, would otherwise grow
 * this process's memory without bound.
 */
export function busyReason(pending: number, bufferedAmount: number): string | null {
  if (pending >= MAX_PENDING_COMMANDS) return `more than ${MAX_PENDING_COMMANDS} commands are still running`;
  if (bufferedAmount > MAX_SOCKET_BACKLOG) return 'earlier replies have not been read yet';
  return null;
}

/** A client message as `{ id, command }`, or the named error sent back for anything else. */
export function parseClientMessage(
  text: string | null,
): { id: number; command: unknown } | Extract<ServerMessage, { type: 'error' }> {
  const bad = (message: string) => ({ type: 'error' as const, error: 'BAD_MESSAGE' as const, message });
  if (text === null) return bad('messages are JSON text, not binary');
  let msg: unknown;
  try {
    msg = JSON.parse(text);
  } catch {
    return bad('the message is not valid JSON');
  }
  if (typeof msg !== 'object' || msg === null || Array.isArray(msg))
    return bad('the message must be an object { id, command }');
  const { id, command } = msg as { id?: unknown; command?: unknown };
  if (typeof id !== 'number' || !Number.isSafeInteger(id)) return bad('the message needs an integer id');
  return { id, command };
}

async function runCommand(api: LabApi, command: unknown): Promise<LabReply> {
  try {
    const cmd = validateLabCommand(command);
    return await api.command(cmd).catch((e: unknown) => ({
      ok: false as const,
      error: 'COMMAND_FAILED',
      message: e instanceof Error ? e.message : String(e),
    }));
  } catch (e) {
    return badCommandReply(e);
  }
}
