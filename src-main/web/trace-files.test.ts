// The traces folder over browser mode's HTTP: downloads and uploads need the
// token, the right Host, and (uploads always, downloads when sent) our Origin.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { LabApi } from '@shared/lab/contract';
import { startWebServer, type WebServer } from './server';
import { uploadName } from './trace-files';
import { encodeEventLine, encodeHeaderLine } from '../lab/trace/ndjson-codec';
import { sampleEvents, sampleHeader } from '../lab/trace/testing/sample-session';

const api: LabApi = { command: async () => ({ ok: true }), subscribe: () => () => {} };

function request(
  port: number,
  method: string,
  pathAndQuery: string,
  headers: Record<string, string> = {},
  body?: string | Buffer,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: pathAndQuery, headers }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const traceText = encodeHeaderLine(sampleHeader()) + sampleEvents().map(encodeEventLine).join('');

describe('browser mode traces folder', () => {
  let server: WebServer;
  let dir: string;
  let rendererDir: string;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-traces-http-'));
    rendererDir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-renderer-'));
    fs.writeFileSync(path.join(rendererDir, 'index.html'), '<!doctype html>');
    fs.writeFileSync(path.join(dir, 'saved.trace.ndjson'), traceText);
    server = await startWebServer({ api, rendererDir, tracesDir: dir });
  });
  afterAll(async () => {
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(rendererDir, { recursive: true, force: true });
  });
  const origin = () => `http://127.0.0.1:${server.port}`;

  it('offers a saved trace as a download only with the token, our Host and (when sent) our Origin', async () => {
    const ok = await request(server.port, 'GET', `/traces/saved.trace.ndjson?token=${server.token}`);
    expect(ok.status).toBe(200);
    expect(ok.headers['content-disposition']).toBe('attachment; filename="saved.trace.ndjson"');
    expect(ok.body).toBe(traceText);
    expect((await request(server.port, 'GET', '/traces/saved.trace.ndjson?token=wrong')).status).toBe(403);
    expect((await request(server.port, 'GET', '/traces/saved.trace.ndjson')).status).toBe(403);
    expect(
      (
        await request(server.port, 'GET', `/traces/saved.trace.ndjson?token=${server.token}`, {
          Host: 'evil.example:80',
        })
      ).status,
    ).toBe(403);
    expect(
      (
        await request(server.port, 'GET', `/traces/saved.trace.ndjson?token=${server.token}`, {
          Origin: 'http://evil.example',
        })
      ).status,
    ).toBe(403);
    expect(
      (
        await request(server.port, 'GET', `/traces/saved.trace.ndjson?token=${server.token}`, {
          Origin: origin(),
        })
      ).status,
    ).toBe(200);
    expect(
      (await request(server.port, 'GET', `/traces/..%2Fetc%2Fpasswd?token=${server.token}`)).status,
    ).toBe(404);
    expect(
      (await request(server.port, 'GET', `/traces/missing.trace.ndjson?token=${server.token}`)).status,
    ).toBe(404);
  });

  it('takes an upload that is a trace, under a safe unused name', async () => {
    const up = await request(
      server.port,
      'POST',
      `/traces?token=${server.token}&name=saved.trace.ndjson`,
      { Origin: origin() },
      traceText,
    );
    expect(up.status).toBe(200);
    const { name } = JSON.parse(up.body) as { name: string };
    expect(name).toBe('saved.trace-2.ndjson');
    expect(fs.readFileSync(path.join(dir, name), 'utf8')).toBe(traceText);
  });

  it('keeps a pcap or pcapng upload (for Open capture) under its own extension, with no header line to find', async () => {
    // Classic pcap, little-endian, then 2 MiB without a newline: past the trace header-line limit.
    const pcap = Buffer.concat([
      Buffer.from('d4c3b2a1020004000000000000000000ffff000001000000', 'hex'),
      Buffer.alloc(2 << 20, 1),
    ]);
    const up = await request(
      server.port,
      'POST',
      `/traces?token=${server.token}&name=${encodeURIComponent('my cluster.pcap')}`,
      { Origin: origin() },
      pcap,
    );
    expect(up.status, up.body).toBe(200);
    expect(JSON.parse(up.body)).toEqual({ name: 'my_cluster.pcap', bytes: pcap.length });
    expect(fs.readFileSync(path.join(dir, 'my_cluster.pcap')).equals(pcap)).toBe(true);
    const ng = Buffer.from('0a0d0d0a1c0000004d3c2b1a01000000ffffffffffffffff1c000000', 'hex');
    const up2 = await request(
      server.port,
      'POST',
      `/traces?token=${server.token}&name=ng.ndjson`,
      { Origin: origin() },
      ng,
    );
    expect(JSON.parse(up2.body)).toMatchObject({ name: 'ng.ndjson.pcapng' });
  });
  it('refuses an upload without our Origin or token, or that is not a trace', async () => {
    expect((await request(server.port, 'POST', `/traces?token=${server.token}`, {}, traceText)).status).toBe(
      403,
    );
    expect(
      (
        await request(
          server.port,
          'POST',
          `/traces?token=${server.token}`,
          { Origin: 'http://evil.example' },
          traceText,
        )
      ).status,
    ).toBe(403);
    expect(
      (await request(server.port, 'POST', `/traces?token=nope`, { Origin: origin() }, traceText)).status,
    ).toBe(403);
    const notTrace = await request(
      server.port,
      'POST',
      `/traces?token=${server.token}&name=x.ndjson`,
      { Origin: origin() },
      '{"hello":1}\n',
    );
    expect(notTrace.status).toBe(400);
    expect(JSON.parse(notTrace.body)).toMatchObject({ error: 'NOT_A_TRACE' });
    expect(fs.readdirSync(dir).filter((n) => n.startsWith('.upload') || n.startsWith('x'))).toEqual([]);
  });

  it('makes upload names safe', () => {
    expect(uploadName('../../etc/passwd', dir)).toBe('etc_passwd.ndjson');
    expect(uploadName(null, dir)).toBe('uploaded.trace.ndjson');
    expect(uploadName('.bashrc', dir)).toBe('bashrc.ndjson');
  });
});
