// What a Slurm job's first task serves so a window elsewhere can watch it
// live (`npm start -- --attach HOST:PORT --token T`, or the window's "Attach
// to a cluster"): the lab contract over one WebSocket, the same messages as
// browser mode, for a client holding the job's token. Bound to loopback by
// default (an SSH tunnel is the way across machines) or to an address the
// person names. Not for browsers: a request carrying an Origin is refused, so
// no web page can reach it. The client may watch and act on the job's
// processes (kill, pause, resume, kill host, link faults), never start,
// stop or replace its topology; and read the job's trace (jobTrace, what
// Save trace saves while attached), never any other file.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import type { AnyCommand, CommandOf, LabApi, LabBatch, ReplyOf } from '@shared/lab/contract';
import { newToken, tokenMatches } from '../web/guard';
import { serveClient } from '../web/server';
import { MAX_CLIENT_MESSAGE } from '../web/protocol';
import { JOB_ENDED_CLOSE } from '../lab/remote-lab';
import type { JobTrace } from './job-trace';

/** What an attached window may ask of a job. */
export const WATCH_COMMANDS: ReadonlySet<string> = new Set([
  'snapshot',
  'recentRecords',
  'getRecordBytes',
  'killRank',
  'pauseRank',
  'resumeRank',
  'killHost',
  'setLinkFault',
]);

/** The job's lab, narrowed to what a watcher may do, and the job's trace (none: nothing to save). */
export function watchApi(lab: LabApi, trace: JobTrace | null = null): LabApi {
  return {
    subscribe: (l: (b: LabBatch) => void) => lab.subscribe(l),
    command<C extends AnyCommand>(cmd: C): Promise<ReplyOf<C['type']>> {
      if (cmd.type === 'jobTrace')
        return (
          trace
            ? trace.command(cmd as CommandOf<'jobTrace'>)
            : Promise.resolve({ ok: false, error: 'NO_TRACE', message: 'this job keeps no trace' })
        ) as Promise<ReplyOf<C['type']>>;
      if (!WATCH_COMMANDS.has(cmd.type))
        return Promise.resolve({
          ok: false,
          error: 'NOT_IN_A_JOB',
          message: `'${cmd.type}' is not available on a Slurm job's topology (it runs as its job script says)`,
        } as ReplyOf<C['type']>);
      return lab.command(cmd);
    },
  } as LabApi;
}

export interface WatchServer {
  port: number;
  token: string;
  close(): Promise<void>;
}

export async function startWatchServer(
  api: LabApi,
  opts: { host?: string; port?: number; token?: string } = {},
): Promise<WatchServer> {
  const token = opts.token ?? newToken();
  const server = http.createServer((_req, res) => {
    res.writeHead(404, { 'Content-Type': 'text/plain' });
    res.end('a Relay Lab job watch server: attach with npm start -- --attach HOST:PORT --token TOKEN\n');
  });
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_CLIENT_MESSAGE });
  server.on('upgrade', (req, socket, head) => {
    socket.on('error', () => socket.destroy());
    let url: URL | null;
    try {
      url = new URL(req.url ?? '', 'http://watch');
    } catch {
      // A request target that is not a path: refused below like any other.
      url = null;
    }
    const reason =
      url?.pathname !== '/watch'
        ? '404 Not Found'
        : req.headers.origin !== undefined
          ? '403 Forbidden'
          : !tokenMatches(url.searchParams.get('token'), token)
            ? '403 Forbidden'
            : null;
    if (reason) {
      socket.end(`HTTP/1.1 ${reason}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => serveClient(ws, api));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    token,
    async close() {
      // Watchers are told the job ended (they stop reconnecting), then cut.
      for (const ws of wss.clients) ws.close(JOB_ENDED_CLOSE, 'the job ended');
      await new Promise((r) => setTimeout(r, 200));
      for (const ws of wss.clients) ws.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
