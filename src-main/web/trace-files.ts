// Browser mode's traces folder over HTTP: a saved trace or pcapng offered as
// a download (GET /traces/NAME), and a trace file uploaded from the person's
// disk (POST /traces?name=NAME) so it can be opened like one saved here.
// The server has already checked Host; these check the token, and the Origin
// (required on an upload, which a page of another site could otherwise send;
// checked when present on a download).
import fs from 'node:fs';
import path from 'node:path';
import type http from 'node:http';
import { readTraceFile } from '../lab/trace/ndjson';
import { originAllowed, tokenMatches } from './guard';

/** A file the traces folder may serve: no folders, no dot files. */
export const DOWNLOAD_NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}\.(ndjson|pcapng)$/;
/** The largest trace an upload may carry. */
export const MAX_UPLOAD_BYTES = 512 * 1024 * 1024;

export interface TraceFilesOptions {
  tracesDir: string;
  token: string;
  port: number;
  headers: () => Record<string, string>;
  maxUploadBytes?: number;
}

function reply(res: http.ServerResponse, opts: TraceFilesOptions, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...opts.headers(), 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/** The upload's name made safe and unused: `x.ndjson`, `x-2.ndjson`, ... */
export function uploadName(wanted: string | null, dir: string): string {
  let base = (wanted ?? 'uploaded.trace.ndjson').replace(/[^A-Za-z0-9._-]/g, '_').replace(/^[._-]+/, '');
  if (!base.endsWith('.ndjson')) base += '.ndjson';
  base = base.slice(-100) || 'uploaded.trace.ndjson';
  const stem = base.slice(0, -'.ndjson'.length);
  let name = base;
  for (let i = 2; fs.existsSync(path.join(dir, name)); i++) name = `${stem}-${i}.ndjson`;
  return name;
}

/** Handles /traces requests; returns false for any other path. */
export function handleTraceFiles(req: http.IncomingMessage, res: http.ServerResponse, url: URL, opts: TraceFilesOptions): boolean {
  if (url.pathname !== '/traces' && !url.pathname.startsWith('/traces/')) return false;
  if (!tokenMatches(url.searchParams.get('token'), opts.token)) {
    reply(res, opts, 403, { error: 'FORBIDDEN', message: 'missing or wrong token' });
    return true;
  }
  const origin = req.headers.origin;
  if (req.method === 'GET' || req.method === 'HEAD') {
    if (origin !== undefined && !originAllowed(origin, opts.port)) {
      reply(res, opts, 403, { error: 'FORBIDDEN', message: 'wrong Origin' });
      return true;
    }
    const name = decodeURIComponent(url.pathname.slice('/traces/'.length));
    const file = path.join(opts.tracesDir, name);
    if (!DOWNLOAD_NAME.test(name) || !fs.existsSync(file)) {
      reply(res, opts, 404, { error: 'NOT_FOUND', message: 'no such trace' });
      return true;
    }
    const size = fs.statSync(file).size;
    res.writeHead(200, {
      ...opts.headers(),
      'Content-Type': name.endsWith('.pcapng') ? 'application/vnd.tcpdump.pcap' : 'application/x-ndjson',
      'Content-Length': size,
      'Content-Disposition': `attachment; filename="${name}"`,
    });
    if (req.method === 'HEAD') res.end();
    else fs.createReadStream(file).pipe(res);
    return true;
  }
  if (req.method === 'POST' && url.pathname === '/traces') {
    if (!originAllowed(origin, opts.port)) {
      reply(res, opts, 403, { error: 'FORBIDDEN', message: 'an upload needs the Origin of this page' });
      return true;
    }
    void receiveUpload(req, res, url, opts);
    return true;
  }
  reply(res, opts, 405, { error: 'METHOD', message: 'method not allowed' });
  return true;
}

async function receiveUpload(req: http.IncomingMessage, res: http.ServerResponse, url: URL, opts: TraceFilesOptions): Promise<void> {
  const max = opts.maxUploadBytes ?? MAX_UPLOAD_BYTES;
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > max) {
    req.resume();
    return reply(res, opts, 413, { error: 'TOO_LARGE', message: `a trace upload is limited to ${max} bytes` });
  }
  fs.mkdirSync(opts.tracesDir, { recursive: true });
  const partial = path.join(opts.tracesDir, `.upload-${process.pid}-${Date.now()}`);
  const out = fs.createWriteStream(partial);
  let received = 0;
  let tooLarge = false;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      received += chunk.length;
      if (received > max) {
        tooLarge = true;
        break;
      }
      if (!out.write(chunk)) await new Promise<void>((r) => out.once('drain', () => r()));
    }
    await new Promise<void>((resolve, reject) => out.end((e?: Error | null) => (e ? reject(e) : resolve())));
    if (tooLarge) throw Object.assign(new Error(`a trace upload is limited to ${max} bytes`), { code: 'TOO_LARGE', status: 413 });
    // Only a trace is kept: its header line must read as one.
    for await (const item of readTraceFile(partial)) {
      if (item.kind === 'header') break;
    }
    const name = uploadName(url.searchParams.get('name'), opts.tracesDir);
    fs.renameSync(partial, path.join(opts.tracesDir, name));
    reply(res, opts, 200, { name, bytes: received });
  } catch (e) {
    out.destroy();
    fs.rmSync(partial, { force: true });
    const err = e as { code?: string; status?: number; message?: string };
    reply(res, opts, err.status ?? 400, { error: typeof err.code === 'string' ? err.code : 'BAD_TRACE', message: err.message ?? String(e) });
  }
}
