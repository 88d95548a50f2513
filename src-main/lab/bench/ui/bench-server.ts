// The window benchmark's engine process (bundled to out/node/ui-bench-server.mjs
// by scripts/bench-ui.mjs): browser mode's lab host and web server, as `npm
// start -- --browser` runs them, plus a control line on stdin for the driver.
// Each stdin line is a JSON command; each answer is one stdout line starting
// "BENCH " with a JSON body.
//   {"op":"start","config":{...}}  starts a topology (the live session's start)
//   {"op":"harvest","units":N}     takes N real units from the running cluster's tap as templates
//   {"op":"feed","rate":R}         replays them into the tap at R units/s (0 stops)
//   {"op":"count"}                 the tap's record count and the feed's counts, with a timestamp
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { chooseFoldKernel } from '@shared/fold';
import { TopologySession } from '../../topology-session';
import { LabHost } from '../../lab-host';
import { TapRouter } from '../../tap-router';
import { newToken } from '../../../web/guard';
import { runBrowserMode } from '../../../web/run-browser-mode';
import { watchLifeline } from '../../../shell-common/lifeline';
import { harvestUnits, SyntheticFeed } from './synthetic-feed';

watchLifeline((why) => {
  process.stderr.write(`ui-bench server: ${why}; stopping.\n`);
  process.exit(1);
});
chooseFoldKernel('best');

const rendererDir = process.argv[2];
if (!rendererDir) {
  process.stderr.write('usage: ui-bench-server.mjs RENDERER_DIR\n');
  process.exit(2);
}
const tracesDir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-ui-bench-'));
const session = new TopologySession();
const host = new LabHost(session, { tracesDir, producer: 'relay-lab bench:ui' });
// The window talks to the tap router in front of the host, as in `npm start -- --browser`.
const lab = new TapRouter(host, { tracesDir, workDir: tracesDir });
const server = await runBrowserMode(lab, {
  open: false,
  taps: [],
  port: 0,
  rendererDir,
  autoStart: false,
  tracesDir,
  token: newToken(),
});
process.on('exit', () => {
  host.removeWorkDir();
  fs.rmSync(tracesDir, { recursive: true, force: true });
});

let feed: SyntheticFeed | null = null;
const answer = (body: unknown) => process.stdout.write(`BENCH ${JSON.stringify(body)}\n`);

async function handle(cmd: { op: string; [k: string]: unknown }): Promise<unknown> {
  const tap = session.activeCluster?.tap;
  switch (cmd.op) {
    case 'url':
      return { url: server.url };
    case 'start': {
      feed?.stop();
      feed = null;
      const reply = await host.command({ type: 'start', config: cmd.config as never });
      return reply.ok ? { ok: true } : { ok: false, error: `${reply.error}: ${reply.message}` };
    }
    case 'harvest': {
      if (!tap) return { ok: false, error: 'no running cluster' };
      const templates = await harvestUnits(tap, Number(cmd.units ?? 400));
      feed = new SyntheticFeed(tap, templates);
      const kinds = [...new Set(templates.map((t) => t.input.kind))];
      return { ok: true, templates: templates.length, kinds };
    }
    case 'feed': {
      if (!feed) return { ok: false, error: 'harvest first' };
      const rate = Number(cmd.rate);
      if (rate > 0) feed.start(rate);
      else feed.stop();
      return { ok: true };
    }
    case 'count':
      return {
        ok: true,
        t: performance.now(),
        tapRecords: tap?.recordCount ?? 0,
        feed: feed ? { ...feed.counts } : null,
        rssBytes: process.memoryUsage().rss,
      };
    default:
      return { ok: false, error: `unknown op ${cmd.op}` };
  }
}

answer({ ok: true, url: server.url });
const rl = readline.createInterface({ input: process.stdin });
rl.on('line', (line) => {
  let cmd: { op: string; id?: number };
  try {
    cmd = JSON.parse(line) as { op: string; id?: number };
  } catch {
    return answer({ ok: false, error: 'not JSON' });
  }
  handle(cmd).then(
    (body) => answer({ id: cmd.id, ...(body as object) }),
    (e: Error) => answer({ id: cmd.id, ok: false, error: e.message }),
  );
});
rl.on('close', () => process.kill(process.pid, 'SIGTERM'));
