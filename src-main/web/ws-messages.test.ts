// Browser mode's WebSocket under unreadable messages and floods: every
// message that cannot be a command gets a named error, and a client cannot
// queue unbounded work or unread replies in this process.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import type { AnyCommand, LabApi, LabReply } from '@shared/lab/contract';
import { busyReason, parseClientMessage, startWebServer, type WebServer } from './server';
import { MAX_PENDING_COMMANDS, MAX_SOCKET_BACKLOG, type ServerMessage } from './protocol';

/** An api whose 'stop' commands wait until released, so commands stay pending. */
class HeldApi implements LabApi {
  held: (() => void)[] = [];
  async command(cmd: AnyCommand): Promise<LabReply> {
    if (cmd.type === 'stop') await new Promise<void>((r) => this.held.push(r));
    return { ok: true };
  }
  subscribe(): () => void {
    return () => {};
  }
}

describe('browser mode WebSocket messages', () => {
  let server: WebServer;
  let rendererDir: string;
  let api: HeldApi;
  let ws: WebSocket;
  const received: ServerMessage[] = [];
  const waitFor = (pred: (m: ServerMessage[]) => boolean) =>
    new Promise<void>((resolve) => {
      const check = () => (pred(received) ? resolve() : setTimeout(check, 5));
      check();
    });

  beforeAll(async () => {
    rendererDir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-ws-renderer-'));
    api = new HeldApi();
    server = await startWebServer({ api, rendererDir });
    ws = new WebSocket(`ws://127.0.0.1:${server.port}/ws?token=${server.token}`, {
      headers: { Origin: `http://127.0.0.1:${server.port}` },
    });
    ws.on('message', (d) => received.push(JSON.parse(String(d)) as ServerMessage));
    await new Promise((r) => ws.once('open', r));
  });
  afterAll(async () => {
    ws.terminate();
    await server.close();
    fs.rmSync(rendererDir, { recursive: true, force: true });
  });

  it('answers unreadable messages with a named error', async () => {
    ws.send('not json');
    ws.send(Buffer.from([1, 2, 3]));
    ws.send('{"command":{"type":"snapshot"}}');
    ws.send('[1,2]');
    await waitFor((m) => m.filter((x) => x.type === 'error').length === 4);
    const errors = received.filter((x) => x.type === 'error');
    expect(errors.map((e) => e.error)).toEqual(['BAD_MESSAGE', 'BAD_MESSAGE', 'BAD_MESSAGE', 'BAD_MESSAGE']);
    expect(parseClientMessage('{"id":1.5,"command":{}}')).toMatchObject({ error: 'BAD_MESSAGE' });
    expect(parseClientMessage('{"id":7,"command":{"type":"stop"}}')).toEqual({
      id: 7,
      command: { type: 'stop' },
    });
  });

  it('answers BUSY past the limit of running commands, and runs the rest once they finish', async () => {
    const extra = 3;
    for (let id = 1000; id < 1000 + MAX_PENDING_COMMANDS + extra; id++)
      ws.send(JSON.stringify({ id, command: { type: 'stop' } }));
    const replies = () =>
      received.filter(
        (x): x is Extract<ServerMessage, { type: 'reply' }> => x.type === 'reply' && x.id >= 1000,
      );
    await waitFor(() => replies().length === extra && api.held.length === MAX_PENDING_COMMANDS);
    expect(replies().map((r) => r.reply)).toEqual(
      Array(extra).fill(expect.objectContaining({ ok: false, error: 'BUSY' })),
    );
    for (const release of api.held.splice(0)) release();
    await waitFor(() => replies().length === MAX_PENDING_COMMANDS + extra);
    expect(replies().filter((r) => r.reply.ok).length).toBe(MAX_PENDING_COMMANDS);
  });

  it('refuses new commands while earlier replies sit unread', () => {
    expect(busyReason(0, 0)).toBeNull();
    expect(busyReason(0, MAX_SOCKET_BACKLOG + 1)).toMatch(/not been read/);
    expect(busyReason(MAX_PENDING_COMMANDS, 0)).toMatch(/still running/);
  });
});
