// Browser mode's entry (bundled to out/node/web.mjs): the LabSession in this
// Node process, behind the loopback HTTP + WebSocket server.
import { LabSession } from '../lab/session';
import { defaultRendererDir, parseBrowserModeArgs, runBrowserMode } from './run-browser-mode';

let opts;
try {
  opts = parseBrowserModeArgs(process.argv.slice(2), { rendererDir: defaultRendererDir() });
} catch (e) {
  process.stderr.write(`relay-lab web: ${(e as Error).message}\n`);
  process.exit(2);
}
try {
  await runBrowserMode(new LabSession(), opts);
} catch (e) {
  process.stderr.write(`relay-lab web: ${(e as Error).message}\n`);
  process.exit(1);
}
