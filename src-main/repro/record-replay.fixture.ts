// Record in a live session and replay, as the window does: a LabHost on a real
// TopologySession (rank processes, relays, controller on loopback), Record on,
// actions sent as the window sends them (killRank, pauseRank, setLinkFault, ...)
// at chosen moments of the rounds, the file drafted by `draftRepro`, replayed
// by the repro runner (what `relay-lab repro` runs) and judged against the
// live session's own rounds: consensus digests, dead set, verdict.
// Shared by the property tests (record-replay.property.test.ts and its slow twin).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import type { LabCommand, LabEvent, LinkFault } from '@shared/lab/contract';
import type { TopologyConfig } from '@shared/lab/topology';
import { parseRepro, type Repro } from '@shared/repro';
import { LabHost } from '../lab/lab-host';
import { TopologySession } from '../lab/topology-session';
import { runRepro, type ReproRun } from './runner';

/** One thing the person does: after `rounds` more rounds and `delayMs` (and once `when` holds), `cmd`. */
export interface Step {
  rounds: number;
  delayMs: number;
  cmd: LabCommand;
  /** Polled every few ms (at most 10 s) before the command: a moment of the rounds to act at. */
  when?: (s: TopologySession) => boolean;
}

export const LIVE_CONFIG: Partial<TopologyConfig> = {
  ranksPerHost: [2, 2],
  modelBytes: 8 * 1024,
  rounds: 0,
  roundIntervalMs: 40,
  seed: 11,
  // Short, so a pause held past it is a death within a test's time (a resume before it is not).
  stalenessMs: 1200,
};

const latency = (ms: number): LinkFault => ({ dir: 'both', latencyMs: ms });

/**
 * A step's command. Rank 0 is never touched and h0 never killed nor its uplink faulted, so a live
 * rank always remains and rounds go on. Pauses are held for 0..2.4 s (resumes come as later steps), so some ranks are
 * resumed in time, some after their death, some never; several steps may fall in one round.
 */
const command: fc.Arbitrary<LabCommand> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.integer({ min: 1, max: 3 }).map((rank) => ({ type: 'killRank', rank }) as const),
  },
  {
    weight: 3,
    arbitrary: fc.integer({ min: 1, max: 3 }).map((rank) => ({ type: 'pauseRank', rank }) as const),
  },
  {
    weight: 3,
    arbitrary: fc.integer({ min: 1, max: 3 }).map((rank) => ({ type: 'resumeRank', rank }) as const),
  },
  { weight: 1, arbitrary: fc.constant({ type: 'killHost', host: 1 } as const) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(
        fc.constantFrom('h1.uplink.data', 'h0.r1.data', 'h1.r2.control', 'h1.r3.data'),
        fc.integer({ min: 1, max: 30 }),
      )
      .map(([link, ms]) => ({ type: 'setLinkFault', link, fault: latency(ms) }) as const),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('h1.uplink.data', 'h0.r1.data', 'h1.r2.control', 'h1.r3.data')
      .map((link) => ({ type: 'setLinkFault', link, fault: null }) as const),
  },
  // The next frame up corrupted: its HMAC fails and the rank (or host) is declared dead.
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('h0.r1.data', 'h1.r3.data', 'h1.uplink.data')
      .map((link) => ({ type: 'setLinkFault', link, fault: { dir: 'up', corruptNext: true } }) as const),
  },
);

export const steps: fc.Arbitrary<Step[]> = fc.array(
  fc.record({
    rounds: fc.constantFrom(0, 0, 1, 2),
    delayMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 300 }), fc.integer({ min: 300, max: 2400 })),
    cmd: command,
  }),
  { minLength: 1, maxLength: 6 },
);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(cond: () => boolean, ms: number, everyMs = 10): Promise<boolean> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) return false;
    await sleep(everyMs);
  }
  return true;
}

export interface Recorded {
  text: string;
  repro: Repro;
  replay: ReproRun;
  /** The round reports and findings of the live session and of the replay, in the order they came. */
  live: LabEvent[];
  replayed: LabEvent[];
}

const keep = (into: LabEvent[]) => (b: { events: LabEvent[] }) => {
  for (const e of b.events) if (e.type === 'round' || e.type === 'finding') into.push(e);
};

/** Runs `plan` in a live session with Record on, drafts the file as the window does, and replays it. */
export async function recordAndReplay(plan: Step[], config = LIVE_CONFIG): Promise<Recorded> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-record-replay-'));
  const session = new TopologySession({ snapLen: 256 });
  const host = new LabHost(session, { tracesDir: path.join(dir, 'traces'), workDir: path.join(dir, 'work') });
  fs.mkdirSync(path.join(dir, 'work'));
  const live: LabEvent[] = [];
  const replayed: LabEvent[] = [];
  session.subscribe(keep(live));
  try {
    const started = await host.command({ type: 'start', config });
    if (!started.ok) throw new Error(`start: ${started.message}`);
    const done = () => session.snapshot().roundsCompleted;
    await until(() => done() >= 2, 60_000);
    const rec = await host.command({ type: 'reproRecord', on: true });
    if (!rec.ok) throw new Error(`reproRecord: ${rec.message}`);
    for (const s of plan) {
      const from = done();
      // A round may stay stalled (a paused rank) until its staleness: wait that long at most.
      await until(() => done() >= from + s.rounds, 10_000);
      if (s.delayMs) await sleep(s.delayMs);
      if (s.when && !(await until(() => s.when!(session), 10_000, 1)))
        throw new Error(`the moment of step ${JSON.stringify(s.cmd)} did not come`);
      // A refused command (e.g. a killed host killed again) is not recorded, as in the window.
      await host.command(s.cmd);
    }
    // Whatever was left paused is resumed or declared dead; a couple more rounds end.
    const from = done();
    await until(() => done() >= from + 2, 15_000);
    const draft = await host.command({ type: 'draftRepro' });
    if (!draft.ok) throw new Error(`draftRepro: ${draft.message}`);
    await host.command({ type: 'stop' });
    const repro = parseRepro(draft.text);
    const replay = await runRepro(repro, { onSession: (s) => s.subscribe(keep(replayed)) });
    return { text: draft.text, repro, replay, live, replayed };
  } finally {
    await host.shutdown();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** What differs between the recording and its replay (empty when the replay holds). */
export function differences(r: Recorded): string[] {
  return r.replay.results
    .filter((x) => !x.ok)
    .map((x) => `${x.name}: expected ${x.expected}, replay ${x.actual}`);
}
