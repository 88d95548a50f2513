// The rank process entry (bundled to out/node/rank.mjs). A lab rank gets its
// spec in RELAY_LAB_RANK_SPEC and reports to its parent over IPC. It never
// outlives its parent: it exits when the IPC channel closes or its parent pid
// changes (the parent also starts it under a kernel parent-death signal).
import {
  isParentToRank,
  parseRankSpec,
  RANK_PARENT_ENV,
  RANK_SPEC_ENV,
  type ParentToRank,
  type RankToParent,
} from './spec';
import { runRank } from './rank-runner';

let finished = false;

/** Set in an Electron utility process (how the Electron shell runs ranks): the channel to the parent. */
const parentPort = (
  process as {
    parentPort?: {
      postMessage(message: unknown): void;
      on?(event: 'message', listener: (e: { data: unknown }) => void): void;
    };
  }
).parentPort;

/** True when this rank can hear its parent (a Node IPC channel, or a parent port that delivers messages). */
const hearsParent = parentPort ? typeof parentPort.on === 'function' : !!process.channel;

/** The parent's messages to this rank, whichever channel it has (unknown ones are dropped). */
function fromParent(listener: (m: ParentToRank) => void): void {
  const take = (m: unknown) => {
    if (isParentToRank(m)) listener(m);
  };
  if (parentPort) parentPort.on?.('message', (e) => take(e.data));
  else process.on('message', take);
}

function watchParent(): void {
  // The kernel's parent-death signal is armed by setpriv just before it runs
  // Node: a parent that died before that moment left this rank to init.
  const expected = Number(process.env[RANK_PARENT_ENV]);
  if (expected > 0 && process.ppid !== expected) process.exit(0);
  const ppid = process.ppid;
  if (process.channel) process.on('disconnect', () => finished || process.exit(0));
  const t = setInterval(() => {
    if (process.ppid !== ppid) process.exit(0);
  }, 500);
  t.unref();
}

async function main(): Promise<void> {
  const raw = process.env[RANK_SPEC_ENV];
  if (!raw) {
    process.stderr.write(
      `rank: ${RANK_SPEC_ENV} is not set (use \`relay-lab rank\` to run a rank by hand)\n`,
    );
    process.exitCode = 2;
    return;
  }
  watchParent();
  const spec = parseRankSpec(raw);
  const send = (m: RankToParent) => {
    if (spec.report !== 'ipc') return;
    if (parentPort) parentPort.postMessage(m);
    else if (process.send && process.connected) process.send(m);
  };
  // A rank that cannot hear its parent takes no cues (the driver then does not wait for it).
  const result = await runRank(spec, send, spec.report === 'ipc' && hearsParent ? fromParent : undefined);
  if (spec.report === 'json') process.stdout.write(JSON.stringify(result) + '\n');
  // Let the IPC channel flush before leaving.
  finished = true;
  if (process.connected) process.disconnect();
  process.exitCode = result.verdict === 'ok' ? 0 : 1;
  // A utility process's parent port keeps it alive: leave once the last message is out.
  if (parentPort) setImmediate(() => process.exit());
}

main().catch((e: unknown) => {
  process.stderr.write(`rank: ${(e as Error).message}\n`);
  process.exit(1);
});
