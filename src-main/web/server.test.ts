import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import type { AnyCommand, LabApi, LabBatch, LabReply } from '@shared/lab/contract';
import { startWebServer, type WebServer } from './server';

// A recording LabApi: the server is a transport, so its test checks what it
// carries and what it refuses, not what the engine does.
class RecordingApi implements LabApi {
  commands: AnyCommand[] = [];
  listeners = new Set<(b: LabBatch) => void>();
  async command(cmd: AnyCommand): Promise<LabReply> {
    this.commands.push(cmd);
    return { ok: true };
  }
  subscribe(listener: (b: LabBatch) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  emit(batch: LabBatch): void {
    for (const l of this.listeners) l(batch);
  }
}

function get(
  port: number,
  pathAndQuery: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: pathAndQuery, headers }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

function connect(url: string, headers: Record<string, string>): Promise<{ ws?: WebSocket; status?: number }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers });
    ws.once('open', () => resolve({ ws }));
    ws.once('unexpected-response', (_req, res) => resolve({ status: res.statusCode }));
    ws.once('error', () => resolve({}));
  });
}

describe('browser mode server', () => {
  let dir: string;
  let api: RecordingApi;
  let srv: WebServer;
  let origin: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-web-'));
    fs.mkdirSync(path.join(dir, 'assets'));
    fs.writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>Relay Lab</title>');
    fs.writeFileSync(path.join(dir, 'assets', 'app.js'), 'console.log(1)');
    fs.writeFileSync(path.join(os.tmpdir(), 'relay-lab-outside.txt'), 'secret');
    api = new RecordingApi();
    srv = await startWebServer({ api, rendererDir: dir });
    origin = `http://127.0.0.1:${srv.port}`;
  });
  afterAll(async () => {
    await srv.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('listens on loopback with the token in the printed URL', () => {
    expect(srv.url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${srv.port}/\\?token=[A-Za-z0-9_-]{32}$`));
  });

  it('serves the page with the token and a strict CSP', async () => {
    const res = await get(srv.port, `/?token=${srv.token}`);
    expect(res.status).toBe(200);
    expect(res.body).toContain('Relay Lab');
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(csp).toContain(`connect-src 'self' ws://127.0.0.1:${srv.port}`);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('refuses the page without the token or with a wrong one', async () => {
    expect((await get(srv.port, '/')).status).toBe(403);
    expect((await get(srv.port, '/?token=nope')).status).toBe(403);
    expect((await get(srv.port, `/index.html?token=${srv.token.slice(1)}x`)).status).toBe(403);
  });

  it('refuses any request whose Host is not our loopback address (DNS rebinding)', async () => {
    const page = await get(srv.port, `/?token=${srv.token}`, { Host: `evil.example:${srv.port}` });
    expect(page.status).toBe(403);
    const asset = await get(srv.port, '/assets/app.js', { Host: `localhost:${srv.port}` });
    expect(asset.status).toBe(403);
  });

  it('serves assets but never a file outside the renderer folder', async () => {
    expect((await get(srv.port, '/assets/app.js')).status).toBe(200);
    expect((await get(srv.port, '/../relay-lab-outside.txt')).status).toBe(404);
    expect((await get(srv.port, '/%2e%2e/relay-lab-outside.txt')).status).toBe(404);
    expect((await get(srv.port, '/assets/%2e%2e%2f%2e%2e%2frelay-lab-outside.txt')).status).toBe(404);
  });

  it('refuses a WebSocket without the token, with a foreign Origin or a foreign Host', async () => {
    const good = `ws://127.0.0.1:${srv.port}/ws?token=${srv.token}`;
    expect((await connect(`ws://127.0.0.1:${srv.port}/ws`, { Origin: origin })).status).toBe(403);
    expect((await connect(`ws://127.0.0.1:${srv.port}/ws?token=wrong`, { Origin: origin })).status).toBe(403);
    expect((await connect(good, { Origin: 'http://evil.example' })).status).toBe(403);
    expect((await connect(good, { Origin: `http://localhost:${srv.port}` })).status).toBe(403);
    expect((await connect(good, {})).status).toBe(403);
    expect((await connect(good, { Origin: origin, Host: `rebind.example:${srv.port}` })).status).toBe(403);
    expect(
      (await connect(`ws://127.0.0.1:${srv.port}/other?token=${srv.token}`, { Origin: origin })).status,
    ).toBe(404);
  });

  it('carries validated commands, named errors for bad ones, and batched events', async () => {
    const { ws } = await connect(`ws://127.0.0.1:${srv.port}/ws?token=${srv.token}`, { Origin: origin });
    expect(ws).toBeDefined();
    const messages: unknown[] = [];
    const waitFor = (pred: (m: { type: string; id?: number }) => boolean) =>
      new Promise<{ type: string; id?: number; reply?: LabReply; batch?: LabBatch }>((resolve) => {
        const check = () => {
          const hit = messages.find((m) => pred(m as { type: string }));
          if (hit) resolve(hit as never);
          else setTimeout(check, 5);
        };
        check();
      });
    ws!.on('message', (d) => messages.push(JSON.parse(d.toString())));

    ws!.send(JSON.stringify({ id: 1, command: { type: 'killRank', rank: 3 } }));
    const ok = await waitFor((m) => m.type === 'reply' && m.id === 1);
    expect(ok.reply).toEqual({ ok: true });
    expect(api.commands).toContainEqual({ type: 'killRank', rank: 3 });

    ws!.send(JSON.stringify({ id: 2, command: { type: 'killRank', rank: 'all' } }));
    const bad = await waitFor((m) => m.type === 'reply' && m.id === 2);
    expect(bad.reply).toMatchObject({ ok: false, error: 'BAD_COMMAND' });
    expect(api.commands).not.toContainEqual({ type: 'killRank', rank: 'all' });

    // Many small batches from the session arrive merged into few messages.
    for (let i = 0; i < 50; i++) api.emit({ events: [{ type: 'log', level: 'info', message: `m${i}` }] });
    const batch = await waitFor(
      (m) =>
        m.type === 'batch' &&
        (m as unknown as { batch: LabBatch }).batch.events.some((e) => e.type === 'log'),
    );
    const logs = batch.batch!.events.filter((e) => e.type === 'log');
    expect(logs.length).toBe(50);
    ws!.close();
  });
});
