// relay-lab run: a whole topology headless (real controller, coordinator,
// relays and rank processes on loopback) and its report (CLI.md 2).
import { DEFAULT_TOPOLOGY, type TopologyConfig } from '@shared/lab/topology';
import { choiceFlag, numberFlag, optionalNumberFlag, parseFlags, printJson, UsageError } from '../args';
import { runTopology } from '../../lab/run-topology';
import { randomBytes } from 'node:crypto';
import { parseTopologyConfig, resolveTopologyConfig, TopologyConfigError } from '@shared/lab/topology-config';
import { randomSessionSalt } from '@shared/lab/session-salt';
import type { Fault, FaultAction } from '../../lab/round-driver';
import type { Command } from './types';
import type { LinkFault } from '@shared/lab/contract';
import { recordSession } from '../../lab/trace/session-recording';
import type { TraceRecorder } from '../../lab/trace/recorder';
import type { TraceWriter } from '../../lab/trace/ndjson';
import { orderSensitive, reproFromRun } from '../../repro/runner';
import type { RemoteHosts } from '../../slurm/remote-hosts';
import type { RunReport } from '../../lab/run-topology';
import type { ResolvedTopology } from '@shared/lab/topology-config';
import type { TopologySession } from '../../lab/topology-session';

/** What `relay-lab slurm` adds to a run (its first task runs the run with the other hosts remote). */
export interface RunExtras {
  /** Called once the flags are checked; 'stop' ends here, before anything starts (a job's flags checked at submit). */
  validated?: (resolved: ResolvedTopology, schedule: Fault[]) => 'stop' | void;
  /** Hosts whose relay and ranks run on other nodes. */
  remote?: RemoteHosts;
  onSession?: (s: TopologySession) => void;
  onReport?: (report: RunReport) => void;
  /** The --trace file as it is written (a job serves it to its watchers): see LiveTrace. */
  onTrace?: (trace: LiveTrace) => void;
}

/**
 * A trace while the run writes it: its writer (where whole lines end, see
 * TraceWriter.position) and the file its bytes are in until it closes
 * (`writingTo`; then `file`, whole, with its end line).
 */
export interface TraceFile {
  writer: TraceWriter;
  writingTo: string;
  file: string;
}

/** The run's trace and its recorder: a job's watchers' kills, pauses and faults are recorded through it. */
export interface LiveTrace extends TraceFile {
  recorder: TraceRecorder;
}
import { atomicWriteStream, writeFileAtomicSync } from '../../files/atomic-write';
import { checkOutputs } from '../files';
import { checkNumber, NUMBER_RANGES, type RangeName } from '@shared/lab/number-ranges';

const USAGE = `usage: relay-lab run [--hosts H] [--ranks-per-host K | --topology 4,2,1] [--dtype f32|bf16]
  [--rounds N] [--model-bytes S] [--mode fold|forward|direct] [--policy elastic|strict]
  [--salt HEX] [--seed N] [--staleness-ms MS] [--starvation-ms MS] [--index-table v2|v2-late] [--kill-rank R@ROUND] [--pause-rank R@ROUND]
  [--kill-host H@ROUND] [--link-fault LINK@ROUND:DIR:SPEC] [--timeout-ms MS] [--trace FILE.ndjson] [--json]
  [--save-repro FILE.json] [--relay-cmd HOST=COMMAND ...]
  --relay-cmd runs host HOST's relay as COMMAND (h0=..., 0=..., or *=... for every host), under flodl's
  launch contract: the hex RelaySpec JSON in FLODL_INTERNAL_RELAY_JSON; split into words as a shell
  would, run without a shell. E.g. --relay-cmd 'h0=/path/to/flodl-build' or 'h0=npx relay-lab relay --from-env'.
  --save-repro writes the reproduction file of this run (docs/reproduction-format.md), expectations from what happened.
  --index-table: the ControlMsgWire / TimingMsgWire variant indices every role speaks (WIRE.md 3.5;
  v2 by default; v2-late has SaveConsensusModel 16, CoordHeartbeat 17, Intent 4, Heartbeat 5).
  --trace saves the session (every unit, 64 KiB per unit) for 'relay-lab trace info|export'.
  --starvation-ms: a reader stuck mid-frame with no byte for this long presumes its peer gone
  (WIRE.md 4.1; flodl's fixed 60 s when absent).
  LINK is a link id (h0.uplink.data, h1.r2.control, ...), DIR up|down|both, SPEC comma-separated:
  latencyMs=N jitterMs=N bandwidth=BYTES_PER_S sliceBytes=N sliceGapMs=N stallMs=N corruptNext reset blackhole clear
forward and direct are lab-only modes (flodl 0.7 has only fold).`;

function faults(values: string[] | undefined, action: FaultAction, flag: string): Fault[] {
  return (values ?? []).map((v) => {
    const m = /^(\d+)@(\d+)$/.exec(v.trim());
    if (!m) throw new UsageError(`--${flag} must look like R@ROUND, got '${v}'`);
    return { action, target: Number(m[1]), round: Number(m[2]) };
  });
}

/** Each numeric fault key and its range (the window's fault controls use the same). */
const NUMERIC_FAULT_KEYS = {
  latencyMs: 'faultMs',
  jitterMs: 'faultMs',
  bandwidth: 'bandwidth',
  sliceBytes: 'sliceBytes',
  sliceGapMs: 'faultMs',
  stallMs: 'faultMs',
} as const satisfies Record<string, RangeName>;
const FLAG_FAULT_KEYS = ['corruptNext', 'reset', 'blackhole'] as const;

/** --link-fault h0.uplink.data@2:up:sliceBytes=7,sliceGapMs=1 */
function linkFaults(values: string[] | undefined): Fault[] {
  return (values ?? []).map((v) => {
    const m = /^([A-Za-z0-9.]+)@(\d+):(up|down|both):(.+)$/.exec(v.trim());
    if (!m) throw new UsageError(`--link-fault must look like LINK@ROUND:DIR:SPEC, got '${v}'`);
    const fault: LinkFault = { dir: m[3] as LinkFault['dir'] };
    let clear = false;
    for (const item of m[4].split(',')) {
      const [k, val] = item.split('=');
      if (k === 'clear' && val === undefined) clear = true;
      else if ((FLAG_FAULT_KEYS as readonly string[]).includes(k) && val === undefined)
        (fault as unknown as Record<string, boolean>)[k] = true;
      else if (Object.hasOwn(NUMERIC_FAULT_KEYS, k) && val !== undefined) {
        const range = NUMBER_RANGES[NUMERIC_FAULT_KEYS[k as keyof typeof NUMERIC_FAULT_KEYS]];
        const r = checkNumber(range, val, `--link-fault ${k}`, true);
        if (!r.ok) throw new UsageError(r.error);
        (fault as unknown as Record<string, number>)[k] = r.value;
      } else
        throw new UsageError(
          `--link-fault: '${item}' is not one of ${[...Object.keys(NUMERIC_FAULT_KEYS).map((x) => `${x}=N`), ...FLAG_FAULT_KEYS, 'clear'].join(', ')}`,
        );
    }
    return { action: 'link-fault', target: -1, round: Number(m[2]), link: m[1], fault: clear ? null : fault };
  });
}

/** The link ids a topology will have (the tap names them so, CLI.md 2), to reject a typo before starting. */
function linkIds(ranksPerHost: number[], mode: TopologyConfig['mode']): string[] {
  const ids: string[] = [];
  let rank = 0;
  ranksPerHost.forEach((k, h) => {
    if (mode !== 'direct') ids.push(`h${h}.uplink.data`, `h${h}.uplink.control`);
    for (let i = 0; i < k; i++, rank++) {
      if (mode === 'direct') ids.push(`r${rank}.uplink.data`, `r${rank}.uplink.control`);
      else ids.push(`h${h}.r${rank}.data`, `h${h}.r${rank}.control`);
    }
  });
  return ids;
}

/** --relay-cmd HOST=COMMAND (repeatable; HOST h0, 0 or * for every host): TopologyConfig.relayCommands. */
function relayCommandsFlag(
  values: string[] | undefined,
  hosts: number,
): Pick<TopologyConfig, 'relayCommands'> {
  if (!values || values.length === 0) return {};
  const out: (string | null)[] = new Array<string | null>(hosts).fill(null);
  for (const v of values) {
    const m = /^\s*(\*|h?\d+)=(.*)$/s.exec(v);
    if (!m || m[2].trim() === '')
      throw new UsageError(
        `--relay-cmd must look like HOST=COMMAND (h0=..., or *=... for every host), got '${v}'`,
      );
    if (m[1] === '*') out.fill(m[2].trim());
    else {
      const h = Number(m[1].replace(/^h/, ''));
      if (h >= hosts)
        throw new UsageError(`--relay-cmd: no host ${m[1]} in this topology (hosts h0..h${hosts - 1})`);
      out[h] = m[2].trim();
    }
  }
  return { relayCommands: out };
}

/** The flag that sets a config field, for a config error ("config.ranksPerHost[2]" -> "--topology"). */
function flagOf(field: string): string {
  const key = /^config\.(\w+)/.exec(field)?.[1] ?? field;
  const flags: Record<string, string> = {
    ranksPerHost: '--hosts, --ranks-per-host or --topology',
    modelBytes: '--model-bytes',
    saltHex: '--salt',
    stalenessMs: '--staleness-ms',
    starvationMs: '--starvation-ms',
    controlIndexTable: '--index-table',
    relayCommands: '--relay-cmd',
  };
  return flags[key] ?? `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

export const runCommand: Command & { run(argv: string[], extras?: RunExtras): Promise<number> } = {
  summary: 'run a whole topology headless and report bytes, rounds and the verdict',
  async run(argv, extras: RunExtras = {}) {
    const { values } = parseFlags(argv, {
      hosts: { type: 'string' },
      'ranks-per-host': { type: 'string' },
      topology: { type: 'string' },
      dtype: { type: 'string' },
      rounds: { type: 'string' },
      'model-bytes': { type: 'string' },
      mode: { type: 'string' },
      policy: { type: 'string' },
      salt: { type: 'string' },
      seed: { type: 'string' },
      'staleness-ms': { type: 'string' },
      'starvation-ms': { type: 'string' },
      'index-table': { type: 'string' },
      'kill-rank': { type: 'string', multiple: true },
      'pause-rank': { type: 'string', multiple: true },
      'kill-host': { type: 'string', multiple: true },
      'link-fault': { type: 'string', multiple: true },
      'timeout-ms': { type: 'string' },
      trace: { type: 'string' },
      'save-repro': { type: 'string' },
      'relay-cmd': { type: 'string', multiple: true },
      json: { type: 'boolean' },
      help: { type: 'boolean' },
    });
    if (values.help) {
      process.stdout.write(USAGE + '\n');
      return 0;
    }
    let ranksPerHost: number[];
    if (values.topology !== undefined) {
      if (values.hosts !== undefined || values['ranks-per-host'] !== undefined)
        throw new UsageError('--topology replaces --hosts and --ranks-per-host');
      if (!/^\d+(,\d+)*$/.test(values.topology))
        throw new UsageError(`--topology must be ranks per host like 4,2,1, got '${values.topology}'`);
      ranksPerHost = values.topology.split(',').map(Number);
    } else {
      const hosts = numberFlag(values.hosts, 'hosts', 'hosts', 2);
      const k = numberFlag(values['ranks-per-host'], 'ranks-per-host', 'ranksPerHost', 4);
      ranksPerHost = Array.from({ length: hosts }, () => k);
    }
    if (ranksPerHost.some((k) => k < 1)) throw new UsageError('every host needs at least one rank');
    const world = ranksPerHost.reduce((a, b) => a + b, 0);
    const config: TopologyConfig = {
      ...DEFAULT_TOPOLOGY,
      ranksPerHost,
      dtype: choiceFlag(values.dtype, 'dtype', ['f32', 'bf16'] as const, 'f32'),
      rounds: numberFlag(values.rounds, 'rounds', 'rounds', 10),
      modelBytes: numberFlag(values['model-bytes'], 'model-bytes', 'modelBytes', 4 * 1024 * 1024),
      mode: choiceFlag(values.mode, 'mode', ['fold', 'forward', 'direct'] as const, 'fold'),
      policy: choiceFlag(values.policy, 'policy', ['elastic', 'strict'] as const, 'elastic'),
      seed: numberFlag(values.seed, 'seed', 'seed', 1),
      stalenessMs: numberFlag(
        values['staleness-ms'],
        'staleness-ms',
        'stalenessMs',
        DEFAULT_TOPOLOGY.stalenessMs,
      ),
      ...(values['starvation-ms'] !== undefined
        ? { starvationMs: numberFlag(values['starvation-ms'], 'starvation-ms', 'starvationMs', 0) }
        : {}),
      roundIntervalMs: 0,
      saltHex: values.salt,
      ...relayCommandsFlag(values['relay-cmd'], ranksPerHost.length),
      // Checked with the rest of the config below (a named BAD_CONFIG error).
      controlIndexTable: (values['index-table'] ??
        DEFAULT_TOPOLOGY.controlIndexTable) as TopologyConfig['controlIndexTable'],
    };
    // The lab's one config check (the window's too: 64 ranks, 512 MiB, the salt), before any process starts.
    let resolved;
    try {
      resolved = resolveTopologyConfig(parseTopologyConfig(config), () =>
        randomSessionSalt((n) => randomBytes(n)),
      );
    } catch (e) {
      if (e instanceof TopologyConfigError)
        throw new UsageError(`${e.code} (${flagOf(e.field)}): ${e.message}`);
      throw e;
    }
    const schedule = [
      ...faults(values['kill-rank'], 'kill-rank', 'kill-rank'),
      ...faults(values['pause-rank'], 'pause-rank', 'pause-rank'),
      ...faults(values['kill-host'], 'kill-host', 'kill-host'),
      ...linkFaults(values['link-fault']),
    ];
    const links = linkIds(ranksPerHost, config.mode);
    for (const f of schedule) {
      if (f.round >= config.rounds)
        throw new UsageError(
          `${f.action} at round ${f.round} never happens: rounds are 0..${config.rounds - 1}`,
        );
      if (f.action === 'link-fault') {
        if (!links.includes(f.link!))
          throw new UsageError(
            `--link-fault: no link '${f.link}' in this topology (links: ${links.join(', ')})`,
          );
        continue;
      }
      const limit = f.action === 'kill-host' ? ranksPerHost.length : world;
      if (f.target >= limit)
        throw new UsageError(`${f.action} target ${f.target} is out of range (< ${limit})`);
    }
    if (config.mode !== 'fold')
      process.stderr.write(`relay-lab run: mode ${config.mode} is lab-only (flodl 0.7 has only fold)\n`);
    const maxMs = optionalNumberFlag(values['timeout-ms'], 'timeout-ms', 'timeoutMs');
    if (extras.validated?.(resolved, schedule) === 'stop') return 0;
    const tracePath = values.trace;
    const reproPath = values['save-repro'];
    checkOutputs([
      { label: '--trace', path: tracePath },
      { label: '--save-repro', path: reproPath },
    ]);
    let recorder: TraceRecorder | null = null;
    const report = await runTopology(resolved, {
      faults: schedule,
      maxMs,
      // A trace keeps the bytes of each unit (up to the tap's default 64 KiB); a plain run keeps none.
      snapLen: tracePath === undefined ? 0 : 64 * 1024,
      extra: extras.remote ? { remote: extras.remote } : undefined,
      onSession: extras.onSession,
      // An external relay's output, prefixed with its host, on the run's stderr.
      onExternalRelayLine: (h, _stream, line) => process.stderr.write(`[h${h} relay] ${line}\n`),
      onRoundsStart: (session) => {
        if (tracePath === undefined) return;
        // Written whole or not at all (the file appears when the run closes it); until then its
        // bytes are in `writingTo`.
        const out = atomicWriteStream(tracePath);
        let rec: TraceRecorder;
        try {
          rec = recordSession(session, out, { producer: 'relay-lab run' });
        } catch (e) {
          out.destroy();
          throw e;
        }
        recorder = rec;
        extras.onTrace?.({ writer: rec.writer, writingTo: out.writingTo, file: tracePath, recorder: rec });
      },
    });
    if (recorder) {
      await (recorder as TraceRecorder).close();
      process.stderr.write(`relay-lab run: trace saved to ${tracePath}\n`);
    }
    if (reproPath !== undefined) {
      writeFileAtomicSync(
        reproPath,
        JSON.stringify(reproFromRun(config, schedule, report, maxMs), null, 2) + '\n',
      );
      process.stderr.write(`relay-lab run: reproduction saved to ${reproPath}\n`);
      if (orderSensitive(report))
        process.stderr.write(
          'relay-lab run: some fold summed 3+ terms in arrival order (as flodl does): a replay may adopt other consensus bytes (see mergeOrder)\n',
        );
    }
    extras.onReport?.(report);
    if (values.json) printJson(report);
    else {
      process.stdout.write(
        `${report.mode}${report.labOnly ? ' (lab-only)' : ''}, ${report.hosts} hosts, ${world} ranks, ${report.modelBytes} B model: ` +
          `${report.roundsCompleted}/${report.roundsRequested} rounds, uplink bytes per host ${report.uplinkBytesPerHost.join(', ')}, ` +
          `dead [${report.dead.join(', ')}], verdict ${report.verdict} (${report.ended})\n`,
      );
    }
    return report.verdict === 'ok' ? 0 : 1;
  },
};
