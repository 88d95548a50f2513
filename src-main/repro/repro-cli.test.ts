// Reproductions end to end through the real command line and real processes:
// a run with a rank kill and link latency is saved with --save-repro, replayed
// twice with identical consensusSha256 in every round, a changed expectation
// fails with its name (exit 1), a format error exits 2 with its path.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { relayLab } from '../cli/testing/relay-lab-cli';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const cli = relayLab;

interface ReplayJson {
  held: boolean;
  expectations: { name: string; ok: boolean }[];
  report: { rounds: { round: number; consensusSha256?: string; mergeOrder?: number[][] }[]; dead: number[] };
}

describe('relay-lab repro', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-repro-'));
  const file = path.join(dir, 'kill-latency.json');

  it('saves a run with a kill and a link latency, and replays it twice bit for bit', async () => {
    const saved = await cli([
      'run',
      '--topology',
      '2,1',
      '--rounds',
      '4',
      '--model-bytes',
      '64K',
      '--seed',
      '7',
      '--kill-rank',
      '1@2',
      '--link-fault',
      'h1.uplink.data@1:up:latencyMs=20',
      '--timeout-ms',
      '120000',
      '--save-repro',
      file,
    ]);
    expect(saved.code, saved.err).toBe(0);
    const repro = JSON.parse(fs.readFileSync(file, 'utf8'));
    expect(repro.schedule.map((a: { action: string }) => a.action)).toEqual(['link-fault', 'kill-rank']);
    expect(repro.expectations.dead).toEqual([1]);
    const savedDigests = repro.expectations.rounds.map((r: { consensusSha256: string }) => r.consensusSha256);
    expect(savedDigests).toHaveLength(4);
    for (const d of savedDigests) expect(d).toMatch(/^[0-9a-f]{64}$/);

    const replays: ReplayJson[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await cli(['repro', file, '--json']);
      expect(r.code, r.err + r.out.slice(0, 2000)).toBe(0);
      replays.push(JSON.parse(r.out));
    }
    const digests = replays.map((x) => x.report.rounds.map((r) => r.consensusSha256));
    expect(digests[0]).toEqual(savedDigests);
    expect(digests[1]).toEqual(digests[0]);
    for (const x of replays) {
      expect(x.held).toBe(true);
      expect(x.report.dead).toEqual([1]);
      // 1 verdict + roundsCompleted + 4 x (verdict, digest) + dead
      expect(x.expectations.length).toBe(11);
    }
  }, 300_000);

  it('a 1 x 4 fold (4 summands, arrival-order sensitive) replays bit for bit: the recorded merge order is enforced', async () => {
    const four = path.join(dir, 'one-by-four.json');
    const saved = await cli([
      'run',
      '--topology',
      '4',
      '--rounds',
      '4',
      '--model-bytes',
      '64K',
      '--seed',
      '11',
      '--timeout-ms',
      '120000',
      '--save-repro',
      four,
    ]);
    expect(saved.code, saved.err).toBe(0);
    const repro = JSON.parse(fs.readFileSync(four, 'utf8'));
    const savedDigests = repro.expectations.rounds.map((r: { consensusSha256: string }) => r.consensusSha256);
    expect(
      repro.expectations.rounds.every((r: { mergeOrder?: number[][] }) => r.mergeOrder?.[0]?.length === 4),
    ).toBe(true);
    for (let i = 0; i < 2; i++) {
      const r = await cli(['repro', four, '--json']);
      expect(r.code, r.err + r.out.slice(0, 2000)).toBe(0);
      const x = JSON.parse(r.out) as ReplayJson;
      expect(x.report.rounds.map((rr) => rr.consensusSha256)).toEqual(savedDigests);
      expect(x.report.rounds.map((rr) => rr.mergeOrder)).toEqual(
        repro.expectations.rounds.map((rr: { mergeOrder?: number[][] }) => rr.mergeOrder),
      );
    }
  }, 300_000);

  it('a changed expectation fails with exit 1 and names it', async () => {
    const repro = JSON.parse(fs.readFileSync(file, 'utf8'));
    repro.expectations.dead = [2];
    repro.expectations.rounds[3].consensusSha256 = '0'.repeat(64);
    const changed = path.join(dir, 'changed.json');
    fs.writeFileSync(changed, JSON.stringify(repro));
    const r = await cli(['repro', changed]);
    expect(r.code, r.err).toBe(1);
    expect(r.out).toContain('FAILS expectations.dead: expected [2], got [1]');
    expect(r.out).toContain('FAILS expectations.rounds[3].consensusSha256');
    expect(r.out).toMatch(/failed: expectations\.rounds\[3\]\.consensusSha256, expectations\.dead/);
  }, 300_000);

  it('a format error exits 2 with the code and the path in the file', async () => {
    const repro = JSON.parse(fs.readFileSync(file, 'utf8'));
    repro.schedule[1].rank = 5;
    const bad = path.join(dir, 'bad.json');
    fs.writeFileSync(bad, JSON.stringify(repro));
    const r = await cli(['repro', bad]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('RANK_OUT_OF_RANGE at schedule[1].rank');
    const usage = await cli(['repro']);
    expect(usage.code).toBe(2);
  }, 120_000);
});

describe('the built-in reproductions converted to files (repros/)', () => {
  for (const name of ['wedged-rank', 'broken-host'])
    it(`${name}.json replays and holds`, async () => {
      const r = await cli(['repro', path.join(root, 'repros', `${name}.json`)]);
      expect(r.code, r.out + r.err).toBe(0);
      expect(r.out).toMatch(/all \d+ expectations hold/);
    }, 300_000);
});
