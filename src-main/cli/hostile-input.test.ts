// Bad input at every door (issue 34): every command, run as a real process,
// given hostile values for each of its numeric flags (NaN, negative, 1e9,
// 1e308, Infinity, hex garbage, empty, a billion) and hostile files (missing,
// a folder, /dev/null, empty, the wrong kind, an output that is an input).
// Each must end with exit 1 or 2 and one line on stderr naming the problem,
// no stack trace, within 10 s, and leave every input file byte for byte as
// it was. Commands that would start a topology must refuse before starting:
// a case that runs past 10 s is killed and fails.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildIpv4Tcp, parseIpv4, TCP_ACK, TCP_SYN } from '../lab/trace/ipv4-tcp';
import {
  enhancedPacketBlock,
  interfaceDescriptionBlock,
  sectionHeaderBlock,
} from '../lab/trace/pcapng-blocks';
import { TraceWriter } from '../lab/trace/ndjson';
import { sampleEvents, sampleHeader } from '../lab/trace/testing/sample-session';
import { LINKTYPE } from '../capture/capture-file';
import { relayLabBin, repoRoot } from './testing/relay-lab-cli';
import { NUMBER_RANGES, type RangeName } from '@shared/lab/number-ranges';

const SALT = '0102030405060708090a0b0c0d0e0f10';
const LIMIT_MS = 10_000;
/** Cases run a few at a time: each is a Node process on a 2-core machine. */
const CONCURRENCY = 3;

let dir: string;
const f = (name: string) => path.join(dir, name);

/** One pcapng section with one raw-IPv4 interface and the given segments. */
function section(segs: { src: [string, number]; dst: [string, number]; flags: number }[]): Buffer {
  return Buffer.concat([
    sectionHeaderBlock('hostile-input test'),
    interfaceDescriptionBlock(LINKTYPE.IPV4, 65535, 'lo'),
    ...segs.map((s, i) => {
      const payload = new Uint8Array(0);
      const data = buildIpv4Tcp({
        src: parseIpv4(s.src[0]),
        dst: parseIpv4(s.dst[0]),
        srcPort: s.src[1],
        dstPort: s.dst[1],
        seq: 1,
        ack: 0,
        flags: s.flags,
        ipId: 1,
        payload,
        payloadLen: 0,
      }).data;
      return enhancedPacketBlock(0, 1_767_000_000_000_000 + i, data, data.length);
    }),
  ]);
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-hostile-'));
  fs.copyFileSync(path.join(repoRoot, 'repros', 'broken-host.json'), f('repro.json'));
  const w = TraceWriter.toFile(f('trace.ndjson'), sampleHeader());
  for (const e of sampleEvents().slice(0, 12)) if (e.type !== 'end') w.write(e);
  await w.close();
  const conn = section([
    { src: ['10.0.0.1', 40001], dst: ['10.0.0.2', 1337], flags: TCP_SYN },
    { src: ['10.0.0.2', 1337], dst: ['10.0.0.1', 40001], flags: TCP_SYN | TCP_ACK },
  ]);
  fs.writeFileSync(f('cap.pcapng'), conn);
  const self: [string, number] = ['127.0.0.1', 40000];
  fs.writeFileSync(f('self.pcapng'), section([{ src: self, dst: self, flags: TCP_SYN }]));
  fs.writeFileSync(f('two.pcapng'), Buffer.concat([conn, conn]));
  fs.writeFileSync(f('bad.ndjson'), '{"format":"nope"}\n\x00\x01garbage\n');
  fs.writeFileSync(f('existing.pcapng'), 'a capture someone kept\n');
  fs.writeFileSync(f('empty'), '');
  fs.writeFileSync(f('not-json.json'), '\x89PNG not json');
  fs.mkdirSync(f('folder'));
  fs.symlinkSync(f('repro.json'), f('repro-link.json'));
  fs.linkSync(f('cap.pcapng'), f('cap-hardlink.pcapng'));
});

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Every file in the fixture folder and its digest. */
function snapshot(): Map<string, string> {
  const out = new Map<string, string>();
  for (const name of fs.readdirSync(dir)) {
    const p = f(name);
    if (fs.lstatSync(p).isFile())
      out.set(name, createHash('sha256').update(fs.readFileSync(p)).digest('hex'));
  }
  return out;
}

interface Outcome {
  code: number | null;
  err: string;
  ms: number;
  killed: boolean;
}

/** Runs `relay-lab ARGS` in its own process group, killed (the group) past LIMIT_MS. */
function runCli(args: readonly string[]): Promise<Outcome> {
  const env = { ...process.env };
  delete env.NODE_EXTRA_CA_CERTS;
  delete env.RELAY_LAB_DEBUG;
  const t0 = Date.now();
  const child = spawn(process.execPath, [relayLabBin, ...args], {
    cwd: dir,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  let killed = false;
  const timer = setTimeout(() => {
    killed = true;
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }, LIMIT_MS);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, err, ms: Date.now() - t0, killed });
    });
  });
}

interface Case {
  args: string[];
  /** What the one stderr line must say (the flag or the problem). */
  names: RegExp;
  /** A legal input that must decode (exit 0 or 1) rather than be refused. */
  decodes?: boolean;
}

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Each command with valid values for everything but the flag under test. */
const BASE: Record<string, string[]> = {
  encode: ['encode', '--salt', SALT, '--json', '{"layer":"lenframe","blob":"00"}'],
  decode: ['decode', '--salt', SALT, '--layer', 'lenframe', '--hex', '0100000000'],
  run: ['run', '--rounds', '2'],
  controller: ['controller', '--port', '0', '--world-size', '1', '--salt', SALT],
  relay: ['relay', '--world-size', '1', '--ranks', '0', '--salt', SALT, '--controller', '127.0.0.1:9'],
  rank: [
    'rank',
    '--rank',
    '0',
    '--world-size',
    '1',
    '--salt',
    SALT,
    '--data-port',
    '9',
    '--control-port',
    '9',
  ],
  bench: ['bench', '--only', 'rounds'],
  trace: ['trace', 'export', 'trace.ndjson', '-o', 'out.pcapng'],
  tap: ['tap', '--listen', '0', '--upstream', '127.0.0.1:9', '--salt', SALT],
  import: ['import', 'cap.pcapng', '--salt', SALT],
  sweep: ['sweep', '--topologies', '1x1', '--modes', 'fold', '--rounds', '1'],
  chaos: ['chaos', '--runs', '1'],
};

/** Every numeric flag of every command, with its range (the one the command checks it against). */
const NUMERIC: Record<string, [string, RangeName][]> = {
  encode: [['ceiling', 'ceiling']],
  decode: [
    ['ceiling', 'ceiling'],
    ['control-version', 'version'],
  ],
  run: [
    ['hosts', 'hosts'],
    ['ranks-per-host', 'ranksPerHost'],
    ['rounds', 'rounds'],
    ['model-bytes', 'modelBytes'],
    ['seed', 'seed'],
    ['staleness-ms', 'stalenessMs'],
    ['starvation-ms', 'starvationMs'],
    ['timeout-ms', 'timeoutMs'],
  ],
  controller: [
    ['port', 'port'],
    ['world-size', 'worldSize'],
    ['staleness-ms', 'stalenessMs'],
    ['data-version', 'version'],
    ['control-version', 'version'],
  ],
  relay: [
    ['world-size', 'worldSize'],
    ['data-port', 'port'],
    ['control-port', 'port'],
    ['data-version', 'version'],
    ['control-version', 'version'],
  ],
  rank: [
    ['rank', 'rank'],
    ['world-size', 'worldSize'],
    ['data-port', 'port'],
    ['control-port', 'port'],
    ['rounds', 'rounds'],
    ['model-bytes', 'modelBytes'],
    ['seed', 'seed'],
    ['data-version', 'version'],
    ['control-version', 'version'],
  ],
  bench: [
    ['model-bytes', 'modelBytes'],
    ['ranks-per-host', 'ranksPerHost'],
    ['hosts', 'hosts'],
    ['rounds', 'benchRounds'],
    ['scale-max-bytes', 'scaleMaxBytes'],
  ],
  trace: [['mss', 'mss']],
  tap: [
    ['snap-len', 'snapLen'],
    ['ceiling', 'ceiling'],
    ['control-version', 'version'],
    ['stall-ms', 'stallMs'],
  ],
  import: [
    ['snap-len', 'snapLen'],
    ['ceiling', 'ceiling'],
    ['control-version', 'version'],
  ],
  sweep: [
    ['model-bytes', 'modelBytes'],
    ['rounds', 'sweepRounds'],
    ['uplink-bandwidth', 'sweepBandwidth'],
    ['uplink-latency-ms', 'sweepLatencyMs'],
    ['seed', 'seed'],
  ],
  chaos: [
    ['runs', 'chaosRuns'],
    ['seed', 'seed'],
    ['case-timeout-ms', 'caseTimeoutMs'],
  ],
};

const HOSTILE = ['NaN', '-1', '1e9', '1e308', 'Infinity', '0xdeadbeefzz', '', '99999999999999999999999'];

function numericCases(): Case[] {
  const out: Case[] = [];
  let k = 0;
  for (const [command, flags] of Object.entries(NUMERIC))
    for (const [flag, range] of flags) {
      // Well formed but one past the flag's range (a billion hosts used to exhaust the heap);
      // then two of the malformed values, in turn, so that every one meets every kind of flag.
      const values = [
        String(NUMBER_RANGES[range].max + 1),
        HOSTILE[k++ % HOSTILE.length],
        HOSTILE[k++ % HOSTILE.length],
      ];
      for (const v of values)
        out.push({ args: [...BASE[command], `--${flag}=${v}`], names: new RegExp(`--${esc(flag)}\\b`) });
    }
  // Link fault numbers, inside one flag.
  for (const key of ['latencyMs', 'jitterMs', 'bandwidth', 'sliceBytes', 'sliceGapMs', 'stallMs'])
    for (const v of ['1000000000000', 'NaN'])
      out.push({
        args: [...BASE.run, '--link-fault', `h0.uplink.data@1:up:${key}=${v}`],
        names: new RegExp(key),
      });
  return out;
}

const FILE_CASES: Case[] = [
  // An output never replaces an input, however it is spelled.
  { args: ['repro', 'repro.json', '--trace', 'repro.json'], names: /never replaces an input/ },
  { args: ['repro', 'repro.json', '--trace', './repro-link.json'], names: /never replaces an input/ },
  { args: ['import', 'cap.pcapng', '--salt', SALT, '--trace', 'cap.pcapng'], names: /never replaces/ },
  {
    args: ['import', 'cap.pcapng', '--salt', SALT, '--trace', 'cap-hardlink.pcapng'],
    names: /never replaces/,
  },
  { args: ['trace', 'export', 'trace.ndjson', '-o', 'trace.ndjson'], names: /never replaces an input/ },
  { args: ['run', '--trace', 'x.ndjson', '--save-repro', './x.ndjson'], names: /name the same file/ },
  // An unreadable input leaves an existing output as it was.
  { args: ['trace', 'export', 'bad.ndjson', '-o', 'existing.pcapng'], names: /bad\.ndjson/ },
  { args: ['trace', 'export', 'empty', '-o', 'existing.pcapng'], names: /EMPTY|empty/ },
  // Outputs that cannot be files.
  { args: ['run', '--trace', 'folder'], names: /--trace: folder is a folder/ },
  { args: ['run', '--save-repro', 'no/such/dir/x.json'], names: /--save-repro: folder .* does not exist/ },
  { args: ['tap', ...BASE.tap.slice(1), '--trace', 'folder'], names: /--trace: folder is a folder/ },
  { args: ['sweep', '--trace-dir', 'empty'], names: /--trace-dir: empty is a file/ },
  { args: ['trace', 'export', 'trace.ndjson', '-o', 'folder'], names: /-o: folder is a folder/ },
  // Inputs that are missing, folders, empty, devices or the wrong kind.
  ...['missing.json', 'folder', '/dev/null', 'empty', 'not-json.json', 'trace.ndjson', 'cap.pcapng'].map(
    (file): Case => ({ args: ['repro', file], names: new RegExp(esc(path.basename(file))) }),
  ),
  ...['missing.pcap', 'folder', '/dev/null', 'empty', 'not-json.json', 'trace.ndjson', 'repro.json'].map(
    (file): Case => ({
      args: ['import', file, '--salt', SALT],
      names: /capture|pcap|no such file|folder|24 bytes|BAD_PCAPNG/,
    }),
  ),
  ...['missing.ndjson', 'folder', '/dev/null', 'empty', 'bad.ndjson', 'cap.pcapng', 'repro.json'].flatMap(
    (file): Case[] => [
      { args: ['trace', 'info', file], names: /trace|no such file|folder|EMPTY|BAD_/ },
      { args: ['trace', 'export', file, '-o', 'out.pcapng'], names: /trace|no such file|folder|EMPTY|BAD_/ },
    ],
  ),
  // Legal captures that used to crash: decoded (exit 0, or 1 for no flodl unit), never a TypeError.
  { args: ['import', 'self.pcapng', '--salt', SALT], names: /./, decodes: true },
  { args: ['import', 'two.pcapng', '--salt', SALT, '--trace', 'two.ndjson'], names: /./, decodes: true },
  // Words, not numbers, and other text flags.
  { args: ['decode', '--salt', SALT, '--layer', 'mux', '--hex', 'zz'], names: /not hex/ },
  { args: ['decode', '--salt', SALT, '--layer', 'mux', '--hex', ''], names: /TRUNCATED|hex/ },
  { args: ['decode', '--salt', 'zz', '--layer', 'mux', '--hex', '00'], names: /--salt/ },
  { args: ['encode', '--salt', SALT, '--json', '{not json'], names: /JSON|json/ },
  { args: ['encode', '--salt', SALT, '--json', '{}'], names: /layer/ },
  { args: ['run', '--topology', '1e9'], names: /--topology/ },
  { args: ['run', '--topology', '1000000000,1'], names: /--topology|ranksPerHost/ },
  { args: ['run', '--hosts', '1000000000'], names: /--hosts: 1000000000 is outside 1 to 16/ },
  { args: ['bench', '--scale-max-bytes', '100GiB'], names: /--scale-max-bytes: 100GiB is outside/ },
  { args: ['run', '--kill-rank', 'NaN@1'], names: /--kill-rank/ },
  { args: ['run', '--link-fault', 'h0.uplink.data@1:up:latencyMs=1e12'], names: /latencyMs/ },
  { args: ['run', '--salt', 'xyz'], names: /--salt/ },
  { args: ['run', '--dtype', 'f64'], names: /--dtype/ },
  { args: ['relay', ...BASE.relay.slice(1), '--ranks', '1e9'], names: /--ranks/ },
  { args: ['tap', '--listen', '99999', '--upstream', '127.0.0.1:9', '--salt', SALT], names: /--listen/ },
  { args: ['scenario', 'no-such-scenario'], names: /no scenario/ },
  { args: ['chaos', '--only', 'NaN'], names: /--only/ },
  { args: ['chaos', '--only', '3,1000000000'], names: /--only: 1000000000 is outside 0 to 99999/ },
  { args: ['sweep', '--warmup', '1e308'], names: /--warmup/ },
  { args: ['sweep', '--topologies', '1000000000x1'], names: /topolog/ },
  { args: ['bench', '--only', 'everything'], names: /--only/ },
  { args: ['bench', '--hosts', '16', '--ranks-per-host', '32'], names: /512 ranks: at most 64/ },
  { args: ['run', '--hosts', '16', '--ranks-per-host', '32'], names: /at most 64 ranks/ },
  { args: ['nonsense'], names: /unknown command/ },
  // A Slurm job's flags are checked before anything is written or submitted.
  { args: ['slurm', 'submit', '--hosts', '1000000000', '--out', 'job'], names: /--hosts/ },
  { args: ['slurm', 'submit', '--salt', SALT], names: /--salt: the job makes its own salt/ },
  { args: ['slurm', 'submit', '--out', 'existing.pcapng'], names: /not an empty folder/ },
  { args: ['slurm', 'script', '--watch', '99999'], names: /--watch/ },
  { args: ['slurm', 'script', '--nodes', 'x'], names: /--nodes/ },
  { args: ['slurm', 'script', '--time', 'NaN'], names: /--time/ },
  { args: ['slurm', 'script', '--sbatch-arg', 'x'], names: /--sbatch-arg/ },
  { args: ['slurm', 'task', '--out', 'job', '--salt-file', 'empty'], names: /SLURM_PROCID/ },
  { args: ['slurm', 'bogus'], names: /unknown subcommand/ },
  { args: ['run', '--no-such-flag'], names: /no-such-flag/ },
];

const CASES: Case[] = [...numericCases(), ...FILE_CASES];

/** Runs the cases CONCURRENCY at a time; each result beside its case. */
async function runAll(cases: Case[]): Promise<{ c: Case; o: Outcome; changed: string[] }[]> {
  const before = snapshot();
  const results: { c: Case; o: Outcome; changed: string[] }[] = [];
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const c = cases[next++];
      const o = await runCli(c.args);
      const now = snapshot();
      const changed = [...before].filter(([name, hash]) => now.get(name) !== hash).map(([name]) => name);
      results.push({ c, o, changed });
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return results;
}

describe('relay-lab: bad input at every door', () => {
  it(`refuses every hostile flag value and file in one named line, no stack, no hang, inputs untouched (${CASES.length} cases)`, async () => {
    const results = await runAll(CASES);
    const problems: string[] = [];
    for (const { c, o, changed } of results) {
      const cmd = `relay-lab ${c.args.map((a) => (a === '' || /\s/.test(a) ? JSON.stringify(a) : a)).join(' ')}`;
      const lines = o.err
        .split('\n')
        .filter((l) => l.trim() !== '' && !l.startsWith('relay-lab: building the command line'));
      const why: string[] = [];
      if (o.killed) why.push(`still running after ${LIMIT_MS} ms`);
      const allowed = c.decodes ? [0, 1] : [1, 2];
      if (!allowed.includes(o.code ?? -1)) why.push(`exit ${o.code}`);
      if (!c.decodes && lines.length !== 1) why.push(`${lines.length} stderr lines`);
      if (!c.decodes && lines.length >= 1 && !c.names.test(lines[0]))
        why.push(`line does not name ${c.names}`);
      if (/\n\s+at |TypeError|ReferenceError|RangeError|Warning:/.test(o.err)) why.push('a stack or warning');
      if (changed.length) why.push(`changed ${changed.join(', ')}`);
      if (why.length) problems.push(`${cmd}: ${why.join('; ')}\n    stderr: ${o.err.trim().slice(0, 300)}`);
    }
    expect(problems.join('\n')).toBe('');
    // Nothing half-written left beside the inputs; the refused outputs were never made.
    const names = fs.readdirSync(dir);
    expect(names.filter((n) => n.endsWith('.part'))).toEqual([]);
    expect(names).not.toContain('x.ndjson');
    expect(fs.readFileSync(f('existing.pcapng'), 'utf8')).toBe('a capture someone kept\n');
  }, 600_000);
});
