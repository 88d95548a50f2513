// `relay-lab trace`: inspect a saved session trace and export it to pcapng.
// Ready to register as commands.trace in src-main/cli/commands/index.ts.
import { UsageError, numberFlag, parseFlags, printJson } from '../../cli/args';
import type { Command } from '../../cli/commands/types';
import { checkOutputs, inputFile } from '../../cli/files';
import { DEFAULT_CONTROL_INDEX_TABLE } from '@shared/wire/control-msg-tables';
import { isTraceError } from './errors';
import type { TraceEventType } from './format';
import { MAX_TCP_PAYLOAD } from './ipv4-tcp';
import { readTraceFile } from './ndjson';
import { exportTraceFileToPcapng } from './pcapng';
import { countWith, eventCountsText } from './info-text';

const USAGE = `usage:
  relay-lab trace info TRACE.ndjson [--json]
  relay-lab trace export TRACE.ndjson [-o OUT.pcapng] [--mss N] [--no-comments] [--json]

export writes a pcapng (loopback TCP/IPv4, real ports) for Wireshark/tshark;
decode it with: tshark -X lua_script:wireshark/relay_lab.lua -r OUT.pcapng`;

async function info(path: string, json: boolean): Promise<number> {
  const counts: Partial<Record<TraceEventType, number>> = {};
  let header: unknown = null;
  let bytesOnWire = 0;
  let bytesCaptured = 0;
  let lastT = 0;
  let truncatedTail = false;
  let complete = false;
  // Every link the records name (the header's and the late ones: a Slurm job's remote legs).
  const unitsPerLink = new Map<string, number>();
  let gaps = 0;
  for await (const item of readTraceFile(path)) {
    if (item.kind === 'header') header = item.header;
    else if (item.kind === 'truncated') truncatedTail = true;
    else {
      const e = item.event;
      counts[e.type] = (counts[e.type] ?? 0) + 1;
      lastT = Math.max(lastT, e.t);
      complete = e.type === 'end';
      if (e.type === 'record') {
        bytesOnWire += e.record.length;
        bytesCaptured += e.bytes.length;
        unitsPerLink.set(e.record.link, (unitsPerLink.get(e.record.link) ?? 0) + 1);
        if (e.record.kind === 'gap') gaps++;
      }
    }
  }
  const h = header as {
    version: number;
    startedAt: number;
    saltHex: string;
    links: unknown[];
    config: { ranksPerHost: number[]; mode: string; controlVersion?: number; controlIndexTable?: string };
  };
  const report = {
    path,
    version: h.version,
    startedAt: new Date(h.startedAt).toISOString(),
    saltHex: h.saltHex,
    ranksPerHost: h.config.ranksPerHost,
    mode: h.config.mode,
    controlVersion: h.config.controlVersion,
    // The table the trace's control frames are decoded with (absent in older traces: v2).
    controlIndexTable: h.config.controlIndexTable ?? DEFAULT_CONTROL_INDEX_TABLE,
    links: h.links.length,
    durationMs: lastT,
    events: counts,
    unitsPerLink: Object.fromEntries([...unitsPerLink].sort(([a], [b]) => a.localeCompare(b))),
    gaps,
    bytesOnWire,
    bytesCaptured,
    complete,
    truncatedTail,
  };
  if (json) printJson(report);
  else {
    // A socket-level reproduction's trace has no hosts: its mode is the lab's default, not its own.
    const topology = report.ranksPerHost.length
      ? `${report.ranksPerHost.join('+')} ranks (${report.mode})`
      : 'no topology (one connection)';
    process.stdout.write(
      `${path}: trace v${report.version}, started ${report.startedAt}, ${topology}, control index table ${report.controlIndexTable}, ${countWith(report.links, 'link', 'links')}, ${report.durationMs.toFixed(1)} ms\n` +
        `  events: ${eventCountsText(counts)}\n` +
        `  units per link: ${
          Object.entries(report.unitsPerLink)
            .map(([id, n]) => `${id} ${n}`)
            .join(', ') || 'none'
        }\n` +
        (gaps > 0
          ? `  ${countWith(gaps, 'gap', 'gaps')} named (units or bytes not kept; the log lines say why)\n`
          : '') +
        `  ${bytesOnWire} bytes on the wire, ${bytesCaptured} captured${complete ? '' : truncatedTail ? '; cut short (last line truncated)' : '; no end line (not closed)'}\n`,
    );
  }
  return 0;
}

export const traceCommand: Command = {
  summary: 'inspect a saved session trace, export it to pcapng',
  async run(argv) {
    const { values, positionals } = parseFlags(
      argv,
      {
        out: { type: 'string', short: 'o' },
        mss: { type: 'string' },
        'no-comments': { type: 'boolean' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      true,
    );
    if (values.help) {
      process.stdout.write(USAGE + '\n');
      return 0;
    }
    const [sub, path, ...extra] = positionals;
    if (!sub || !path || extra.length > 0 || (sub !== 'info' && sub !== 'export'))
      throw new UsageError(`expected 'info' or 'export' and one trace file (relay-lab trace --help)`);
    const mss = numberFlag(values.mss, 'mss', 'mss', MAX_TCP_PAYLOAD);
    const out = values.out ?? path.replace(/(\.trace)?\.ndjson$/, '') + '.pcapng';
    try {
      // A trace that is missing or a folder, or an output that cannot be written (a folder, no
      // such folder, the trace itself), is a rejected input here (exit 1), as a file that
      // cannot be read or written always was for this command.
      const input = inputFile('the trace', path);
      if (sub === 'export') checkOutputs([{ label: '-o', path: out }], [input]);
    } catch (e) {
      if (!(e instanceof UsageError)) throw e;
      process.stderr.write(`relay-lab trace: ${e.message}\n`);
      return 1;
    }
    try {
      if (sub === 'info') return await info(path, values.json ?? false);
      const stats = await exportTraceFileToPcapng(path, out, { mss, comments: !values['no-comments'] });
      if (values.json) printJson({ pcapng: out, ...stats });
      else
        process.stdout.write(
          `${out}: ${stats.units} units in ${stats.packets} packets over ${stats.connections} connections${stats.shortUnits ? `, ${stats.shortUnits} captured short` : ''}${stats.truncatedTail ? ' (the trace was cut short)' : ''}\n`,
        );
      return 0;
    } catch (e) {
      if (isTraceError(e)) {
        process.stderr.write(`relay-lab trace: ${path}: ${e.code}: ${e.message}\n`);
        return 1;
      }
      if (typeof (e as NodeJS.ErrnoException).syscall === 'string') {
        // A file that cannot be read or written: ENOENT, EACCES, EISDIR...
        process.stderr.write(`relay-lab trace: ${(e as Error).message}\n`);
        return 1;
      }
      throw e;
    }
  },
};
