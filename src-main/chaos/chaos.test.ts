// The chaos soak's short test: cases are deterministic and within bounds; real
// runs (real processes on loopback) pass the independent checks; and the
// checks fail on a tampered report, a missing or extra death, a hang and a
// leftover process, so a green soak means something.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { checkRun, type RunObservation } from './check';
import fc from 'fast-check';
import { generateCase, SCHEDULE_BUDGET_MS, STALENESS_MS, type ChaosCase } from './generate';
import { CHAOS_TAG_ENV, processesTagged, relayLabBin, runCase } from './runner';
import type { soak } from './soak';

const RUN = { runTimeoutMs: 120_000, wallMs: 180_000 };

function smallCase(runArgs: string[], extra: Partial<ChaosCase>): ChaosCase {
  return {
    index: 0,
    seed: 0,
    ranksPerHost: [2, 1],
    mode: 'fold',
    policy: 'elastic',
    dtype: 'bf16',
    modelBytes: 4096,
    rounds: 3,
    runArgs,
    mustDie: [],
    mayDie: [],
    mayEndEarly: false,
    scheduleMs: 0,
    ...extra,
  };
}

const clone = <T>(x: T): T => JSON.parse(JSON.stringify(x)) as T;

describe('chaos case generator', () => {
  it('is deterministic and stays within the soak bounds', () => {
    const modes = new Set<string>();
    const flags = new Set<string>();
    for (let i = 0; i < 300; i++) {
      const c = generateCase(7, i);
      expect(generateCase(7, i)).toEqual(c);
      expect(c.ranksPerHost.length).toBeGreaterThanOrEqual(1);
      expect(c.ranksPerHost.length).toBeLessThanOrEqual(3);
      for (const k of c.ranksPerHost) expect(k >= 1 && k <= 4).toBe(true);
      expect(c.modelBytes >= 1024 && c.modelBytes <= 256 * 1024 && c.modelBytes % 4 === 0).toBe(true);
      expect(c.rounds >= 3 && c.rounds <= 8).toBe(true);
      const world = c.ranksPerHost.reduce((a, b) => a + b, 0);
      // Someone always survives what must or may die.
      expect(new Set([...c.mustDie, ...c.mayDie]).size).toBeLessThan(world);
      modes.add(`${c.mode}/${c.policy}/${c.dtype}`);
      for (const a of c.runArgs) if (a.startsWith('--') && /kill|pause|link/.test(a)) flags.add(a);
    }
    expect(modes.size).toBe(12);
    expect([...flags].sort()).toEqual(['--kill-host', '--kill-rank', '--link-fault', '--pause-rank']);
    expect(generateCase(8, 0)).not.toEqual(generateCase(7, 0));
  });
});

/**
 * What a case's schedule may add to its run, recomputed from its `run` arguments alone (not from
 * the generator's own estimate): each sliced link costs (gap + 0.5 ms) per slice of the bytes it
 * may carry from its round on, a bandwidth cap the bytes over the rate, a stall its length, a
 * pause the staleness limit plus a second, latency a few exchanges per round.
 */
function scheduleCostFromArgs(c: ChaosCase): number {
  let ms = 0;
  for (let i = 0; i < c.runArgs.length; i++) {
    const flag = c.runArgs[i];
    const value = c.runArgs[i + 1];
    if (flag === '--pause-rank') ms += STALENESS_MS + 1000;
    if (flag !== '--link-fault') continue;
    const m = /^(\S+)@(\d+):(up|down|both):(.*)$/.exec(value)!;
    const [, link, round, dir, spec] = m;
    const rounds = c.rounds - Number(round) + 1;
    const dirs = dir === 'both' ? 2 : 1;
    // What a link carries per round and direction: a host's control uplink carries every rank's
    // messages, its data uplink every rank's frame in forward mode but one HostFrame in fold mode.
    const host = /^h(\d+)\.uplink\./.exec(link);
    const ranks = host ? c.ranksPerHost[Number(host[1])] : 1;
    const perRound = link.endsWith('.control')
      ? ranks * 1024
      : (c.mode === 'forward' ? ranks : 1) * (c.modelBytes + 128);
    const bytes = perRound * rounds;
    const kv = Object.fromEntries(spec.split(',').map((p) => p.split('=')));
    if (kv.sliceBytes)
      ms += dirs * Math.ceil(bytes / Number(kv.sliceBytes)) * (Number(kv.sliceGapMs ?? 0) + 0.5);
    if (kv.bandwidth) ms += (bytes * 1000) / Number(kv.bandwidth);
    if (kv.stallMs) ms += Number(kv.stallMs);
    if (kv.latencyMs) ms += rounds * 8 * (Number(kv.latencyMs) + Number(kv.jitterMs ?? 0));
  }
  return ms;
}

describe('chaos case bounds (issue 17: a generated case must fit its run deadline)', () => {
  it('every generated case: its schedule costs at most the budget, recomputed from its run line', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), fc.nat(999), (seed, index) => {
        const c = generateCase(seed, index);
        const cost = scheduleCostFromArgs(c);
        expect(cost).toBeLessThanOrEqual(SCHEDULE_BUDGET_MS);
        expect(c.scheduleMs).toBeLessThanOrEqual(SCHEDULE_BUDGET_MS);
      }),
      { numRuns: 10_000 },
    );
    // The soaks of record, every case.
    for (const seed of [17, 2026])
      for (let i = 0; i < 200; i++)
        expect(scheduleCostFromArgs(generateCase(seed, i))).toBeLessThanOrEqual(SCHEDULE_BUDGET_MS);
  });

  it('a corrupted frame a relay reads from a rank may cost the whole host (seed 17 case 136)', () => {
    // h0.r1.data@3:up:corruptNext in forward mode shut h0's relay data channel down, as flodl's
    // relay does, and ranks 0..3 died: the case allowed rank 1 only. Now such a fault allows its
    // whole host (and, with h1's uplink already broken, case 136 drops it: someone must survive).
    expect(generateCase(17, 136).runArgs).not.toContain('h0.r1.data@3:up:corruptNext');
    let found = 0;
    for (const seed of [17, 2026])
      for (let i = 0; i < 400; i++) {
        const c = generateCase(seed, i);
        const hostOf = c.ranksPerHost.flatMap((k, h) => Array<number>(k).fill(h));
        for (const a of c.runArgs) {
          const m = /^h(\d+)\.r(\d+)\.data@\d+:(up|both):corruptNext$/.exec(a);
          if (!m || c.mode === 'direct') continue;
          found++;
          const host = hostOf.flatMap((h, r) => (h === Number(m[1]) ? [r] : []));
          const allowed = new Set([...c.mustDie, ...c.mayDie]);
          expect(host.filter((r) => !allowed.has(r))).toEqual([]);
        }
      }
    expect(found).toBeGreaterThan(0);
  });

  it('slices grow with the model: seed 2026 case 19 (85 KB, sliced both ways from round 2) no longer slices by 7', () => {
    const c = generateCase(2026, 19);
    expect(c.modelBytes).toBe(85104);
    const slice = c.runArgs.find((a) => a.startsWith('h0.r0.data@2:both:sliceBytes='))!;
    const bytes = Number(/sliceBytes=(\d+)/.exec(slice)![1]);
    // 2 × 85 KB × 6 rounds at 7 bytes a slice is about 150,000 slices; now at most about 4,000.
    expect(bytes).toBeGreaterThan(7);
    expect((2 * (85104 + 128) * 6) / bytes).toBeLessThanOrEqual(4100);
    // Small models keep the 7-byte slices that split every header field across reads.
    const small = Array.from({ length: 300 }, (_, i) => generateCase(7, i)).filter(
      (x) => x.modelBytes <= 2048 && x.runArgs.some((a) => a.includes('sliceBytes=')),
    );
    expect(small.length).toBeGreaterThan(0);
    for (const x of small) expect(x.runArgs.join(' ')).toMatch(/sliceBytes=7,/);
  });
});

describe('chaos checks on real runs', () => {
  it(
    'a bf16 fold run with a killed rank passes, and every tampering is flagged',
    { timeout: 240_000 },
    async () => {
      // Three ranks on host 0 so the merge order matters (bf16 re-encodes the relay's sum).
      const args = [
        '--topology',
        '3,1',
        '--dtype',
        'bf16',
        '--model-bytes',
        '4096',
        '--rounds',
        '3',
        '--seed',
        '11',
      ];
      const c = smallCase([...args, '--kill-rank', '3@1'], { ranksPerHost: [3, 1], mustDie: [3] });
      const obs = await runCase(c.runArgs, `test-${process.pid}-a`, RUN);
      const ok = checkRun(c, obs, 0);
      expect(ok.failures).toEqual([]);
      expect(ok.roundsChecked).toBe(3);
      expect(obs.report!.dead).toEqual([3]);

      const kinds = (o: RunObservation, cc = c) => checkRun(cc, o, 0).failures.map((f) => f.kind);
      // One rank's copy differs.
      const digest = clone(obs);
      digest.report!.rounds[1].adopted![0].digest = '0'.repeat(64);
      expect(kinds(digest)).toContain('wrong-consensus');
      // Other contributions (another seed): every copy differs from the recomputation.
      const seed = clone(obs);
      seed.report!.seed += 1;
      expect(kinds(seed).filter((k) => k === 'wrong-consensus').length).toBeGreaterThanOrEqual(3 * 3);
      // A rank missing from the reduce order: the weight differs.
      const weight = clone(obs);
      weight.report!.rounds[0].groups!.find((x) => x.length === 3)!.pop();
      weight.report!.rounds[0].accepted = weight.report!.rounds[0].groups!.flat();
      expect(kinds(weight)).toContain('wrong-consensus');
      // A killed rank missing from the dead set, and a death no fault explains.
      const missed = clone(obs);
      missed.report!.dead = [];
      expect(kinds(missed)).toEqual(['missed-death']);
      const extra = clone(obs);
      extra.report!.dead = [0, 3];
      expect(kinds(extra)).toContain('unexpected-death');
      // A live rank that never adopted.
      const undelivered = clone(obs);
      undelivered.report!.rounds[2].adopted = undelivered.report!.rounds[2].adopted!.filter(
        (a) => a.rank !== 0,
      );
      expect(kinds(undelivered)).toEqual(['undelivered']);
      // Rounds missing without a fault that may end them.
      const short = clone(obs);
      short.report!.roundsCompleted = 2;
      expect(kinds(short)).toEqual(['incomplete']);
    },
  );

  it(
    'a run past its wall-clock bound is a hang, and a process left behind is an orphan',
    { timeout: 120_000 },
    async () => {
      const c = smallCase(['--topology', '2', '--model-bytes', '4096', '--rounds', '1000'], {
        ranksPerHost: [2],
      });
      const obs = await runCase(c.runArgs, `test-${process.pid}-b`, { runTimeoutMs: 600_000, wallMs: 1500 });
      expect(obs.hung).toBe(true);
      expect(checkRun(c, obs, 0).failures.map((f) => f.kind)).toContain('hang');

      const tag = `test-${process.pid}-orphan`;
      const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], {
        env: { ...process.env, [CHAOS_TAG_ENV]: tag },
        stdio: 'ignore',
      });
      try {
        await new Promise((r) => setTimeout(r, 300));
        const found = processesTagged(tag);
        expect(found.map((p) => p.pid)).toEqual([child.pid]);
        const withOrphan: RunObservation = { ...obs, hung: false, orphans: found };
        expect(checkRun(c, withOrphan, 0).failures.map((f) => f.kind)).toContain('orphan');
      } finally {
        child.kill('SIGKILL');
      }
    },
  );

  it(
    'relay-lab chaos runs a small seeded soak and exits 0 with one JSON document',
    { timeout: 240_000 },
    async () => {
      // The first seed whose case 0 is small and quick (no pause: a pause waits out the staleness limit).
      let seed = 1;
      for (; ; seed++) {
        const c = generateCase(seed, 0);
        const world = c.ranksPerHost.reduce((a, b) => a + b, 0);
        if (world <= 3 && c.modelBytes <= 16384 && c.rounds <= 4 && !c.runArgs.includes('--pause-rank'))
          if (c.runArgs.some((a) => /^--(kill|link)/.test(a))) break;
      }
      const child = spawn(
        process.execPath,
        [relayLabBin(), 'chaos', '--runs', '1', '--seed', String(seed), '--json'],
        {
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let out = '';
      let err = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
      const code = await new Promise<number | null>((r) => child.on('close', r));
      const report = JSON.parse(out) as Awaited<ReturnType<typeof soak>>;
      expect({ code, failing: report.failing }).toEqual({ code: 0, failing: [] });
      expect(report.runs).toBe(1);
      expect(report.roundsChecked).toBeGreaterThan(0);
      expect(err).toMatch(/^chaos 0: ok/m);
    },
  );
});
