// Browser mode under hostile or broken requests: each one gets a refusal and
// the server keeps answering. Every case here once ended the whole process
// with an uncaught exception (vitest reports that as a failed run).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import net from 'node:net';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { LabApi } from '@shared/lab/contract';
import { requestUrl, startWebServer, type WebServer } from './server';

const api: LabApi = { command: async () => ({ ok: true }), subscribe: () => () => {} };

/** Sends raw bytes (so the request line can be anything) and returns the status code, or 0 when closed without one. */
function raw(port: number, text: string): Promise<number> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(text));
    let got = '';
    socket.on('data', (d) => (got += d.toString('latin1')));
    socket.on('error', () => {});
    socket.on('close', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(got)?.[1] ?? 0)));
  });
}

function request(
  port: number,
  method: string,
  pathAndQuery: string,
  headers: Record<string, string> = {},
  body?: string | Buffer[],
) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: pathAndQuery, headers }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    if (Array.isArray(body)) {
      for (const b of body) req.write(b);
      req.end();
    } else req.end(body);
  });
}

describe('browser mode under hostile requests', () => {
  let server: WebServer;
  let dir: string;
  let outside: string;
  let rendererDir: string;
  const page = () => `/?token=${server.token}`;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-hostile-traces-'));
    outside = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-hostile-outside-'));
    rendererDir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-hostile-renderer-'));
    fs.writeFileSync(path.join(rendererDir, 'index.html'), '<!doctype html>');
    fs.mkdirSync(path.join(dir, 'folder.trace.ndjson'));
    fs.writeFileSync(path.join(outside, 'secret.ndjson'), 'not for the browser\n');
    fs.symlinkSync(path.join(outside, 'secret.ndjson'), path.join(dir, 'link.trace.ndjson'));
    server = await startWebServer({ api, rendererDir, tracesDir: dir, maxUploadBytes: 1024 });
  });
  afterAll(async () => {
    await server.close();
    for (const d of [dir, outside, rendererDir]) fs.rmSync(d, { recursive: true, force: true });
  });

  it('refuses a request target that is not a path, on a request and on an upgrade', async () => {
    const host = `Host: 127.0.0.1:${server.port}\r\n`;
    expect(await raw(server.port, `GET http://[ HTTP/1.1\r\n${host}Connection: close\r\n\r\n`)).toBe(400);
    expect(
      await raw(
        server.port,
        `GET http://[ HTTP/1.1\r\n${host}Connection: Upgrade\r\nUpgrade: websocket\r\n\r\n`,
      ),
    ).toBe(404);
    expect((await request(server.port, 'GET', page())).status).toBe(200);
    expect(requestUrl('//evil.example/x', server.port)).toBeNull();
    expect(requestUrl('/x?y=1', server.port)?.pathname).toBe('/x');
  });

  it('answers a malformed escape in a trace name with 404', async () => {
    const res = await request(server.port, 'GET', `/traces/%E0%A4%A.ndjson?token=${server.token}`);
    expect(res.status).toBe(404);
    expect((await request(server.port, 'GET', page())).status).toBe(200);
  });

  it('does not serve a folder or follow a symlink out of the traces folder', async () => {
    expect(
      (await request(server.port, 'GET', `/traces/folder.trace.ndjson?token=${server.token}`)).status,
    ).toBe(404);
    const link = await request(server.port, 'GET', `/traces/link.trace.ndjson?token=${server.token}`);
    expect(link.status).toBe(404);
    expect(link.body).not.toContain('not for the browser');
    expect((await request(server.port, 'GET', page())).status).toBe(200);
  });

  it('stops an upload without Content-Length at the limit and keeps nothing of it', async () => {
    const origin = `http://127.0.0.1:${server.port}`;
    const chunks = Array.from({ length: 256 }, () => Buffer.alloc(16 * 1024, 0x61));
    const res = await request(
      server.port,
      'POST',
      `/traces?token=${server.token}&name=big.ndjson`,
      { Origin: origin, 'Transfer-Encoding': 'chunked' },
      chunks,
    ).catch(() => ({ status: 0, body: '' }));
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toMatchObject({ error: 'TOO_LARGE' });
    expect(fs.readdirSync(dir).filter((n) => n.startsWith('.upload') || n.startsWith('big'))).toEqual([]);
    expect((await request(server.port, 'GET', page())).status).toBe(200);
  });

  it('needs the token for the page under every spelling of its path', async () => {
    for (const alias of [
      '/',
      '/index.html',
      '/%69ndex.html',
      '/index.html/',
      '/index%2ehtml',
      '/index.html%2f',
      '/./index.html',
    ])
      expect((await request(server.port, 'GET', alias)).status, alias).toBe(403);
    expect((await request(server.port, 'GET', `/%69ndex.html?token=${server.token}`)).status).toBe(200);
  });

  it('answers an upload that declares too many bytes with 413 and closes, without reading the body', async () => {
    const origin = `http://127.0.0.1:${server.port}`;
    const head =
      `POST /traces?token=${server.token} HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nOrigin: ${origin}\r\n` +
      `Content-Length: 1000000000000\r\n\r\n`;
    // raw() resolves when the server closes the socket: it must not wait for the terabyte.
    expect(await raw(server.port, head)).toBe(413);
  });
});
