// Browser mode around any LabApi: serve, start the default topology, print
// the URL on a line of its own, open it unless asked not to, and shut down
// cleanly on a signal.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LabApi, TapSpec } from '@shared/lab/contract';
import { tapsOfFlags, TapSpecError } from '@shared/lab/tap-spec';
import { startWebServer, type WebServer } from './server';
import { describeOpen, openInAppMode } from './open-browser';
import { defaultTracesDir } from '../lab/lab-host';

export interface BrowserModeOptions {
  open: boolean;
  port?: number;
  rendererDir: string;
  /** Start the default topology at launch (the app's behaviour with no configuration). */
  autoStart: boolean;
  /** Saved traces go here, and the window lists and opens traces from here (default ~/relay-lab-traces). */
  tracesDir: string;
  /** A trace to open at launch (`--trace FILE`). */
  trace?: string;
  /** This launch's token (default: a fresh one). */
  token?: string;
  /** Live taps to start at launch (`--tap [ADDR:]PORT=HOST:PORT[@NAME][,...] --salt HEX`). */
  taps: TapSpec[];
  /** A job's watch server to attach the window to at launch (`--attach HOST:PORT --token T`). */
  attach?: { address: string; token: string };
}

export function parseBrowserModeArgs(argv: string[], defaults: { rendererDir: string }): BrowserModeOptions {
  const opts: BrowserModeOptions = {
    open: true,
    rendererDir: defaults.rendererDir,
    autoStart: true,
    tracesDir: defaultTracesDir(),
    taps: [],
  };
  const tapFlags: string[] = [];
  let salt: string | undefined;
  let attach: string | undefined;
  let token: string | undefined;
  let i = 0;
  const value = (flag: string): string => {
    const v = argv[++i];
    if (v === undefined || v.startsWith('--')) throw new Error(`${flag} takes a value`);
    return v;
  };
  for (; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--no-open') opts.open = false;
    else if (a === '--browser') continue;
    else if (a === '--idle') opts.autoStart = false;
    else if (a === '--port') {
      const n = Number(argv[++i]);
      if (!Number.isInteger(n) || n < 0 || n > 65535)
        throw new Error(`--port takes a port number, not '${argv[i]}'`);
      opts.port = n;
    } else if (a === '--renderer') opts.rendererDir = path.resolve(argv[++i] ?? '');
    else if (a === '--traces-dir') opts.tracesDir = path.resolve(value(a));
    else if (a === '--trace') opts.trace = path.resolve(value(a));
    else if (a === '--tap') tapFlags.push(value(a));
    else if (a === '--salt') salt = value(a);
    else if (a === '--attach') attach = value(a);
    else if (a === '--token') token = value(a);
    else
      throw new Error(
        `unknown option '${a}' (known: --no-open, --port N, --renderer DIR, --idle, --traces-dir DIR, --trace FILE, --tap [ADDR:]PORT=HOST:PORT[@NAME], --salt HEX, --attach HOST:PORT --token T)`,
      );
  }
  if ((attach === undefined) !== (token === undefined))
    throw new Error("--attach HOST:PORT and --token T go together (the job's folder's watch.json has both)");
  if (attach !== undefined && token !== undefined) {
    if (!/^[A-Za-z0-9.:[\]-]+:\d{1,5}$/.test(attach))
      throw new Error(`--attach takes HOST:PORT, not '${attach}'`);
    opts.attach = { address: attach, token };
    // The window watches the job: no topology of its own at launch.
    opts.autoStart = false;
  }
  opts.taps = tapsOfFlagsOrThrow(tapFlags, salt);
  return opts;
}

/** `--tap` values with their `--salt`, as one line for a person. */
function tapsOfFlagsOrThrow(flags: string[], salt: string | undefined): TapSpec[] {
  try {
    return tapsOfFlags(flags, salt);
  } catch (e) {
    if (e instanceof TapSpecError) throw new Error(e.message, { cause: e });
    throw e;
  }
}

/** The renderer next to this bundle: out/node/web.mjs -> out/renderer. */
export function defaultRendererDir(): string {
  return fileURLToPath(new URL('../renderer/', import.meta.url));
}

// The page's origin includes the port, and localStorage (theme, layout) is
// per origin: reuse the last port when it is free so the layout persists.
const portFile = path.join(os.homedir(), '.cache', 'relay-lab', 'web-port');
function lastPort(): number | undefined {
  try {
    const n = Number(fs.readFileSync(portFile, 'utf8').trim());
    return Number.isInteger(n) && n > 1024 && n < 65536 ? n : undefined;
  } catch {
    return undefined;
  }
}
function rememberPort(port: number): void {
  try {
    fs.mkdirSync(path.dirname(portFile), { recursive: true });
    fs.writeFileSync(portFile, String(port));
  } catch {
    // Only a convenience.
  }
}

export async function runBrowserMode(api: LabApi, opts: BrowserModeOptions): Promise<WebServer> {
  if (!fs.existsSync(path.join(opts.rendererDir, 'index.html'))) {
    throw new Error(`no built renderer at ${opts.rendererDir} (run: npx electron-vite build)`);
  }
  let server: WebServer;
  const wanted = opts.port ?? lastPort();
  try {
    const common = { api, rendererDir: opts.rendererDir, token: opts.token, tracesDir: opts.tracesDir };
    server = await startWebServer({ ...common, port: wanted ?? 0 });
  } catch (e) {
    if (opts.port !== undefined) throw e;
    server = await startWebServer({
      api,
      rendererDir: opts.rendererDir,
      token: opts.token,
      tracesDir: opts.tracesDir,
      port: 0,
    });
  }
  if (opts.port === undefined) rememberPort(server.port);

  if (opts.autoStart) {
    const reply = await api.command({ type: 'start' });
    if (!reply.ok)
      process.stderr.write(
        `relay-lab: the default topology did not start: ${reply.error}: ${reply.message}\n`,
      );
  }

  process.stdout.write(`Relay Lab is running in browser mode. Open:\n${server.url}\n`);
  if (opts.open) process.stdout.write(describeOpen(await openInAppMode(server.url)) + '\n');
  process.stdout.write('Press Ctrl+C to stop the lab.\n');

  let stopping = false;
  const shutdown = async (code: number) => {
    if (stopping) return;
    stopping = true;
    await Promise.race([api.command({ type: 'stop' }), new Promise((r) => setTimeout(r, 3000))]).catch(
      () => {},
    );
    await server.close().catch(() => {});
    process.exit(code);
  };
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));
  return server;
}
