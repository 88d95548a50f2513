// Browser mode's traces folder over HTTP: a saved trace or pcapng offered as
// a download (GET /traces/NAME), and a trace file uploaded from the person's
// disk (POST /traces?name=NAME) so it can be opened like one saved here; a
// pcap/pcapng upload (told by its first bytes) is kept as NAME.pcap(ng) for
// "Open capture".
// The server has already checked Host; these check the token, and the Origin
// (required on an upload, which a page of another site could otherwise send;
// checked when present on a download).
import fs from 'node:fs';
import path from 'node:path';
import type http from 'node:http';
import { randomUUID } from 'node:crypto';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { readTraceFile } from '../lab/trace/ndjson';
import { originAllowed, tokenMatches } from './guard';

/** A file the traces folder may serve: no folders, no dot files. */
export const DOWNLOAD_NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}\.(ndjson|pcapng)$/;
/** The largest trace an upload may carry. */
export const MAX_UPLOAD_BYTES = 512 * 1024 * 1024;
/**
 * The longest header line an upload may carry. The header is checked before
 * the upload is kept; a first line that never ends is refused as it streams
 * in, instead of being read whole to find its end. (A header names the
 * topology's links: about 200 bytes a link, so 1 MiB is thousands of links.)
 */
export const MAX_HEADER_LINE_BYTES = 1024 * 1024;
/** Uploads one server receives at once; more are answered 429 without reading their bodies. */
export const MAX_CONCURRENT_UPLOADS = 2;

export interface TraceFilesOptions {
  tracesDir: string;
  token: string;
  port: number;
  headers: () => Record<string, string>;
  maxUploadBytes?: number;
  /** The server's count of uploads in progress (shared by all its requests). */
  uploads: { active: number };
}

function reply(res: http.ServerResponse, opts: TraceFilesOptions, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...opts.headers(),
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** The upload's name made safe and unused: `x.ndjson`, `x-2.ndjson`, ... */
export function uploadName(wanted: string | null, dir: string, ext = '.ndjson'): string {
  const fallback = ext === '.ndjson' ? 'uploaded.trace.ndjson' : `uploaded${ext}`;
  let base = (wanted ?? fallback).replace(/[^A-Za-z0-9._-]/g, '_').replace(/^[._-]+/, '');
  if (!base.endsWith(ext)) base += ext;
  base = base.slice(-100) || fallback;
  const stem = base.slice(0, -ext.length);
  let name = base;
  for (let i = 2; fs.existsSync(path.join(dir, name)); i++) name = `${stem}-${i}${ext}`;
  return name;
}

/**
 * A capture (for "Open capture") by its first 4 bytes: pcapng's section
 * header block, or classic pcap in either byte order, micro- or nanosecond.
 */
export function captureExtension(head: Uint8Array): '.pcap' | '.pcapng' | null {
  if (head.length < 4) return null;
  const magic = ((head[0]! << 24) | (head[1]! << 16) | (head[2]! << 8) | head[3]!) >>> 0;
  if (magic === 0x0a0d0d0a) return '.pcapng';
  if ([0xa1b2c3d4, 0xd4c3b2a1, 0xa1b23c4d, 0x4d3cb2a1].includes(magic)) return '.pcap';
  return null;
}

/** Handles /traces requests; returns false for any other path. */
export function handleTraceFiles(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  url: URL,
  opts: TraceFilesOptions,
): boolean {
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
    void sendDownload(req, res, url, opts);
    return true;
  }
  if (req.method === 'POST' && url.pathname === '/traces') {
    if (!originAllowed(origin, opts.port)) {
      reply(res, opts, 403, { error: 'FORBIDDEN', message: 'an upload needs the Origin of this page' });
      return true;
    }
    if (opts.uploads.active >= MAX_CONCURRENT_UPLOADS) {
      res.setHeader('Connection', 'close');
      reply(res, opts, 429, {
        error: 'BUSY',
        message: `${MAX_CONCURRENT_UPLOADS} uploads are already in progress; try again when one ends`,
      });
      return true;
    }
    opts.uploads.active++;
    let counted = true;
    const done = (): void => {
      if (counted) opts.uploads.active--;
      counted = false;
    };
    // Counted until the exchange ends, however it ends (answered, aborted, reset).
    res.once('close', done);
    void receiveUpload(req, res, url, opts).finally(done);
    return true;
  }
  reply(res, opts, 405, { error: 'METHOD', message: 'method not allowed' });
  return true;
}

/** `decodeURIComponent`, or null for a malformed escape such as `%E0%A4%A` (it throws URIError). */
function decodePathPart(part: string): string | null {
  try {
    return decodeURIComponent(part);
  } catch {
    return null;
  }
}

async function sendDownload(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  url: URL,
  opts: TraceFilesOptions,
): Promise<void> {
  const name = decodePathPart(url.pathname.slice('/traces/'.length));
  const notFound = (): void => reply(res, opts, 404, { error: 'NOT_FOUND', message: 'no such trace' });
  if (name === null || !DOWNLOAD_NAME.test(name)) return notFound();
  // One open file: its stat and its bytes are the same file, which may be a
  // folder or vanish between checks; no symlink is followed out of the folder.
  let handle: fs.promises.FileHandle;
  try {
    handle = await fs.promises.open(
      path.join(opts.tracesDir, name),
      fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0),
    );
  } catch {
    return notFound();
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) {
      await handle.close();
      return notFound();
    }
    res.writeHead(200, {
      ...opts.headers(),
      'Content-Type': name.endsWith('.pcapng') ? 'application/vnd.tcpdump.pcap' : 'application/x-ndjson',
      'Content-Length': stat.size,
      'Content-Disposition': `attachment; filename="${name}"`,
    });
    if (req.method === 'HEAD') {
      await handle.close();
      res.end();
      return;
    }
    await pipeline(handle.createReadStream({ end: Math.max(0, stat.size - 1) }), res);
  } catch {
    await handle.close().catch(() => {});
    if (!res.headersSent)
      reply(res, opts, 500, { error: 'READ_FAILED', message: 'the trace could not be read' });
    else res.destroy();
  }
}

/**
 * Gives the checked upload its final name without ever replacing a file:
 * a hard link fails on an existing name (rename would overwrite one that
 * another upload or a save took since uploadName looked).
 */
function keepUpload(partial: string, wanted: string | null, dir: string, ext: string): string {
  for (;;) {
    const name = uploadName(wanted, dir, ext);
    try {
      fs.linkSync(partial, path.join(dir, name));
    } catch (e) {
      if ((e as { code?: string }).code === 'EEXIST') continue;
      throw e;
    }
    fs.rmSync(partial, { force: true });
    return name;
  }
}

async function firstBytes(file: string, n: number): Promise<Uint8Array> {
  const h = await fs.promises.open(file, 'r');
  try {
    const buf = Buffer.alloc(n);
    const { bytesRead } = await h.read(buf, 0, n, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await h.close();
  }
}

async function receiveUpload(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  url: URL,
  opts: TraceFilesOptions,
): Promise<void> {
  const max = opts.maxUploadBytes ?? MAX_UPLOAD_BYTES;
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > max) {
    // Answer at once and close: draining the declared body would read up to
    // all of it for nothing.
    res.setHeader('Connection', 'close');
    return reply(res, opts, 413, {
      error: 'TOO_LARGE',
      message: `a trace upload is limited to ${max} bytes`,
    });
  }
  const partial = path.join(opts.tracesDir, `.upload-${randomUUID()}`);
  let received = 0;
  let headerEnded = false;
  // Counts and caps the bytes as they pass, so a body without (or lying
  // about) Content-Length still stops at the limit; and the first line must
  // end within MAX_HEADER_LINE_BYTES.
  const limit = new Transform({
    transform(chunk: Buffer, _enc, done) {
      const before = received;
      received += chunk.length;
      if (received > max)
        return done(
          Object.assign(new Error(`a trace upload is limited to ${max} bytes`), {
            code: 'TOO_LARGE',
            status: 413,
          }),
        );
      // A capture has no header line (its first 4 bytes say so; the rest is binary).
      if (before === 0 && captureExtension(chunk)) headerEnded = true;
      if (!headerEnded) {
        const nl = chunk.indexOf(0x0a);
        if (nl >= 0 && before + nl <= MAX_HEADER_LINE_BYTES) headerEnded = true;
        else if (received > MAX_HEADER_LINE_BYTES)
          return done(
            Object.assign(
              new Error(`the first line (the trace header) is longer than ${MAX_HEADER_LINE_BYTES} bytes`),
              { code: 'HEADER_TOO_LONG', status: 413 },
            ),
          );
      }
      done(null, chunk);
    },
  });
  try {
    fs.mkdirSync(opts.tracesDir, { recursive: true });
    // A write error (disk full, folder gone) rejects here instead of being an
    // unhandled 'error' event that ends the process.
    await pipeline(req, limit, fs.createWriteStream(partial, { flags: 'wx' }));
    // Only a trace or a capture (for "Open capture") is kept: a trace's header line must read as one.
    const ext = captureExtension(await firstBytes(partial, 4));
    if (!ext)
      for await (const item of readTraceFile(partial, { maxLineBytes: MAX_HEADER_LINE_BYTES })) {
        if (item.kind === 'header') break;
      }
    const name = keepUpload(partial, url.searchParams.get('name'), opts.tracesDir, ext ?? '.ndjson');
    reply(res, opts, 200, { name, bytes: received });
  } catch (e) {
    fs.rmSync(partial, { force: true });
    if (!req.complete) {
      // Tell the client why, then stop reading the rest of a too-large body.
      res.setHeader('Connection', 'close');
    }
    const err = e as { code?: string; status?: number; message?: string };
    reply(res, opts, err.status ?? 400, {
      error: typeof err.code === 'string' ? err.code : 'BAD_TRACE',
      message: err.message ?? String(e),
    });
  }
}
