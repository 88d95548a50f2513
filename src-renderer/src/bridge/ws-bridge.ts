// Browser mode's side of the contract: the LabApi over the WebSocket of the
// page's own server, with this launch's token taken from the page URL.
import type { AnyCommand, LabApi, LabBatch, LabReply } from '@shared/lab/contract';

type ServerMessage = { type: 'reply'; id: number; reply: LabReply } | { type: 'batch'; batch: LabBatch };
/**
 * `closed`: the socket dropped and the lab is being asked why. `stopped`:
 * nothing answers at this address (the lab ended); the tab keeps asking.
 * `restarted`: a lab answers here but refuses this tab's token, so it is a
 * new launch with a new token; this tab can never reconnect and stops trying.
 */
export type ConnectionState = 'connecting' | 'open' | 'closed' | 'stopped' | 'restarted';

/** Whether the lab at a page address answers this token ('ours'), another launch's ('other'), or nothing does ('none'). */
export type LabProbe = 'ours' | 'other' | 'none';

/** Asks the page's own server for the page with this tab's token (HEAD, no body): 200 ours, 403 another launch's. */
export async function probeLab(pageUrl: string, fetchFn: typeof fetch = fetch): Promise<LabProbe> {
  try {
    const res = await fetchFn(pageUrl, { method: 'HEAD', cache: 'no-store' });
    if (res.ok) return 'ours';
    return res.status === 403 ? 'other' : 'none';
  } catch {
    return 'none';
  }
}

/** The page address (with its token) for a lab WebSocket URL: ws://host/ws?token=T -> http://host/?token=T. */
export function pageUrlFor(wsUrl: string): string {
  const u = new URL(wsUrl);
  u.protocol = u.protocol === 'wss:' ? 'https:' : 'http:';
  u.pathname = '/';
  return u.toString();
}

export class WebSocketLabApi implements LabApi {
  private ws: WebSocket | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, (reply: LabReply) => void>();
  private readonly listeners = new Set<(batch: LabBatch) => void>();
  private retryMs = 250;
  private closed = false;

  constructor(
    private readonly url: string,
    private readonly onState: (s: ConnectionState) => void = () => {},
    private readonly probe: (pageUrl: string) => Promise<LabProbe> = probeLab,
  ) {
    this.open();
  }

  command(cmd: AnyCommand): Promise<LabReply> {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) {
      return Promise.resolve({ ok: false, error: 'NOT_CONNECTED', message: 'not connected to the lab' });
    }
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      ws.send(JSON.stringify({ id, command: cmd }));
    });
  }

  subscribe(listener: (batch: LabBatch) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Sends a trace file from the person's disk into the lab's traces folder
   * (POST /traces on the page's own server, with this launch's token).
   * Returns the name it was stored under, ready for openTrace.
   */
  async uploadTrace(file: Blob, name: string): Promise<string> {
    const token = new URL(this.url).searchParams.get('token') ?? '';
    const url = `/traces?token=${encodeURIComponent(token)}&name=${encodeURIComponent(name)}`;
    const res = await fetch(url, {
      method: 'POST',
      body: file,
      headers: { 'Content-Type': 'application/x-ndjson' },
    });
    const body = (await res.json().catch(() => ({}))) as { name?: string; error?: string; message?: string };
    if (!res.ok || !body.name)
      throw new Error(`${body.error ?? res.status}: ${body.message ?? 'upload failed'}`);
    return body.name;
  }

  close(): void {
    this.closed = true;
    this.ws?.close();
  }

  private open(): void {
    this.onState('connecting');
    const ws = new WebSocket(this.url);
    this.ws = ws;
    ws.onopen = () => {
      this.retryMs = 250;
      this.onState('open');
    };
    ws.onmessage = (ev) => {
      let msg: ServerMessage;
      try {
        msg = JSON.parse(String(ev.data)) as ServerMessage;
      } catch {
        return;
      }
      if (msg.type === 'reply') {
        this.pending.get(msg.id)?.(msg.reply);
        this.pending.delete(msg.id);
      } else if (msg.type === 'batch') {
        for (const l of this.listeners) l(msg.batch);
      }
    };
    ws.onclose = () => {
      for (const resolve of this.pending.values())
        resolve({ ok: false, error: 'NOT_CONNECTED', message: 'connection to the lab closed' });
      this.pending.clear();
      this.onState('closed');
      if (!this.closed) void this.findOutWhy();
    };
  }

  /**
   * After a drop, asks the page's server before reconnecting: this launch
   * (reconnect), another launch with a new token (say so, stop), or nothing
   * (say the lab stopped; keep asking with backoff).
   */
  private async findOutWhy(): Promise<void> {
    while (!this.closed) {
      const answer = await this.probe(pageUrlFor(this.url));
      if (this.closed) return;
      if (answer === 'ours') {
        setTimeout(() => this.open(), this.retryMs);
        this.retryMs = Math.min(this.retryMs * 2, 5000);
        return;
      }
      if (answer === 'other') {
        this.onState('restarted');
        return;
      }
      this.onState('stopped');
      await new Promise((r) => setTimeout(r, this.retryMs));
      this.retryMs = Math.min(this.retryMs * 2, 5000);
    }
  }
}

/** The WebSocket URL for this page: same host, path /ws, the page's token. */
export function webSocketUrlFor(location: Location): string | null {
  const token = new URLSearchParams(location.search).get('token');
  if (!token || (location.protocol !== 'http:' && location.protocol !== 'https:')) return null;
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${location.host}/ws?token=${encodeURIComponent(token)}`;
}
