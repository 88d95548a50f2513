// Browser mode's limits on what a request can make it read or reveal: links
// in the built assets, an upload whose header line never ends, too many
// uploads at once, a trace name that is a link or not a trace, and the page
// a URL without the token gets.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import net from 'node:net';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { LabApi } from '@shared/lab/contract';
import { startWebServer, type WebServer } from './server';
import { MAX_CONCURRENT_UPLOADS, MAX_HEADER_LINE_BYTES } from './trace-files';
import { readStatic } from '../shell-common/static-files';
import { LabHost } from '../lab/lab-host';
import { TopologySession } from '../lab/topology-session';

const api: LabApi = { command: async () => ({ ok: true }), subscribe: () => () => {} };
const SECRET = 'SECRET-CONTENT-4f1d';

function request(
  port: number,
  method: string,
  pathAndQuery: string,
  headers: Record<string, string> = {},
  body?: Buffer[] | string,
): Promise<{ status: number; body: string; type: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: pathAndQuery, headers }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: text, type: String(res.headers['content-type']) }),
      );
    });
    req.on('error', reject);
    if (Array.isArray(body)) {
      for (const b of body) req.write(b);
      req.end();
    } else req.end(body);
  });
}

const tempDir = (tag: string) => fs.mkdtempSync(path.join(os.tmpdir(), `relay-lab-limits-${tag}-`));

describe('browser mode limits', () => {
  let server: WebServer;
  let traces: string;
  let outside: string;
  let renderer: string;
  const origin = () => `http://127.0.0.1:${server.port}`;

  beforeAll(async () => {
    traces = tempDir('traces');
    outside = tempDir('outside');
    renderer = tempDir('renderer');
    fs.writeFileSync(path.join(outside, 'secret.js'), SECRET);
    fs.writeFileSync(path.join(renderer, 'index.html'), '<!doctype html><title>Relay Lab</title>');
    fs.mkdirSync(path.join(renderer, 'assets'));
    fs.writeFileSync(path.join(renderer, 'assets', 'app.js'), 'console.log(1)');
    // A link to a file outside, and a linked folder, inside the built assets.
    fs.symlinkSync(path.join(outside, 'secret.js'), path.join(renderer, 'assets', 'link.js'));
    fs.symlinkSync(outside, path.join(renderer, 'assets', 'linked-dir'));
    server = await startWebServer({ api, rendererDir: renderer, tracesDir: traces });
  });
  afterAll(async () => {
    await server.close();
    for (const d of [traces, outside, renderer]) fs.rmSync(d, { recursive: true, force: true });
  });

  it('serves no file through a symbolic link in the built assets', async () => {
    expect((await request(server.port, 'GET', '/assets/app.js')).status).toBe(200);
    for (const p of ['/assets/link.js', '/assets/linked-dir/secret.js', '/assets/%6cink.js']) {
      const res = await request(server.port, 'GET', p);
      expect(res.status, p).toBe(404);
      expect(res.body).not.toContain(SECRET);
    }
    expect(readStatic(renderer, '/assets/link.js')).toBeNull();
    expect(readStatic(renderer, '/assets/app.js')?.relPath).toBe('assets/app.js');
  });

  it('refuses an upload whose first line does not end within the header limit, keeping nothing', async () => {
    const chunk = Buffer.alloc(256 * 1024, 0x61);
    const chunks = Array.from({ length: (MAX_HEADER_LINE_BYTES / chunk.length) * 3 }, () => chunk);
    const res = await request(
      server.port,
      'POST',
      `/traces?token=${server.token}&name=endless.ndjson`,
      { Origin: origin(), 'Transfer-Encoding': 'chunked' },
      chunks,
    ).catch(() => ({ status: 0, body: '{}', type: '' }));
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toMatchObject({ error: 'HEADER_TOO_LONG' });
    expect(fs.readdirSync(traces)).toEqual([]);
  });

  it(`receives at most ${MAX_CONCURRENT_UPLOADS} uploads at once and takes more once they end`, async () => {
    // Uploads that send their head and a few bytes, then stall.
    const stalled = Array.from({ length: MAX_CONCURRENT_UPLOADS }, () => {
      const s = net.connect(server.port, '127.0.0.1', () =>
        s.write(
          `POST /traces?token=${server.token} HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\n` +
            `Origin: ${origin()}\r\nContent-Length: 100000\r\n\r\n{"format"`,
        ),
      );
      s.on('error', () => {});
      return s;
    });
    const another = () =>
      request(
        server.port,
        'POST',
        `/traces?token=${server.token}`,
        { Origin: origin(), 'Content-Type': 'application/x-ndjson' },
        'not a trace\n',
      );
    // Until the server has read both stalled heads, another upload is simply checked (and refused as no trace).
    await expect.poll(async () => (await another()).status, { timeout: 20_000 }).toBe(429);
    const busy = await another();
    expect(JSON.parse(busy.body)).toMatchObject({ error: 'BUSY' });
    for (const s of stalled) s.destroy();
    await expect.poll(async () => (await another()).status, { timeout: 20_000 }).toBe(400);
    expect(fs.readdirSync(traces)).toEqual([]);
  });

  it('answers a URL without the token with a page that says where the right URL is', async () => {
    for (const [p, presented] of [
      ['/', false],
      ['/?token=stale', true],
    ] as const) {
      const res = await request(server.port, 'GET', p);
      expect(res.status, p).toBe(403);
      expect(res.type).toMatch(/^text\/html/);
      expect(res.body).toContain('npm start');
      expect(res.body).toContain(`http://127.0.0.1:${server.port}/?token=`);
      expect(res.body).not.toContain(server.token);
      expect(res.body).toMatch(presented ? /not this launch/ : /has no token/);
    }
    expect((await request(server.port, 'GET', `/?token=${server.token}`)).status).toBe(200);
  });
});

describe('openTrace in the traces folder', () => {
  it('refuses a link and never echoes the contents of a file that is not a trace', async () => {
    const traces = tempDir('open');
    const outside = tempDir('open-outside');
    const host = new LabHost(new TopologySession({}), { tracesDir: traces, workDir: tempDir('work') });
    try {
      fs.writeFileSync(path.join(outside, 'passwd'), `${SECRET}:x:0:0\n`);
      fs.symlinkSync(path.join(outside, 'passwd'), path.join(traces, 'link.trace.ndjson'));
      fs.writeFileSync(path.join(traces, 'plain.trace.ndjson'), `${SECRET}:x:0:0\n`);
      fs.writeFileSync(path.join(traces, 'half.trace.ndjson'), `{"format": ${SECRET}\n`);
      const link = await host.command({ type: 'openTrace', name: 'link.trace.ndjson' });
      expect(link).toMatchObject({ ok: false, error: 'NOT_FOUND' });
      expect(JSON.stringify(link)).toMatch(/symbolic link/);
      for (const name of ['link.trace.ndjson', 'plain.trace.ndjson', 'half.trace.ndjson']) {
        const reply = await host.command({ type: 'openTrace', name });
        expect(reply.ok, name).toBe(false);
        expect(JSON.stringify(reply), name).not.toContain(SECRET);
      }
      expect(await host.command({ type: 'openTrace', name: 'plain.trace.ndjson' })).toMatchObject({
        error: 'NOT_A_TRACE',
      });
    } finally {
      await host.shutdown();
      for (const d of [traces, outside]) fs.rmSync(d, { recursive: true, force: true });
    }
  });
});
