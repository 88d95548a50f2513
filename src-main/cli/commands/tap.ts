// relay-lab tap: a transparent TCP proxy put between a flodl peer and its
// upstream (a relay and the controller, a rank and its relay, a rank and the
// controller in direct mode) that decodes what crosses and reports each unit.
import { checkOutputs } from '../files';
import { saltFromHex } from '@shared/wire/salt';
import { DEFAULT_FRAME_CEILING } from '@shared/wire/constants';
import { nodeMac } from '../../crypto/node-mac';
import { TapProxy } from '../../capture/tap-proxy';
import { unitLineOf } from '../../capture/link-naming';
import { captureTraceHeader, CaptureTraceWriter } from '../../capture/trace-out';
import { TraceWriter } from '../../lab/trace/ndjson';
import { UsageError, numberFlag, optionalNumberFlag, parseFlags } from '../args';
import { hostPortFlag, indexTableFlag, portFlag, sessionSaltFlag } from './role-flags';
import type { Command } from './types';

const USAGE = `usage: relay-lab tap --listen [ADDR:]PORT --upstream HOST:PORT --salt HEX
  [--name h0.uplink] [--ndjson | --trace FILE.ndjson] [--snap-len BYTES (64KiB)]
  [--ceiling BYTES (1GiB)] [--control-version N] [--index-table v2|v2-late] [--stall-ms MS (10000)]
  [--forward-only]

Point the peer (a relay's --controller, a rank's --data-port/--control-port)
at the tap's port; the tap dials the upstream for every connection and
forwards every byte unchanged both ways. --ndjson prints one JSON line per
unit on stdout; --trace writes a trace that 'relay-lab trace info' and the
window open. Without either, one line per unit on stderr. --forward-only
decodes nothing (a bare hop: the floor to read the tap's own cost against).
Ctrl-C stops it.`;

/** [ADDR:]PORT; ADDR defaults to 127.0.0.1. */
export function listenFlag(value: string | undefined): { host: string; port: number } {
  if (value === undefined) throw new UsageError('--listen [ADDR:]PORT is required');
  if (/^\d+$/.test(value)) return { host: '127.0.0.1', port: portFlag(value, 'listen', 0) };
  return hostPortFlag(value, 'listen', '');
}

export const tapCommand: Command = {
  summary: 'a transparent TCP proxy that decodes the flodl units crossing it',
  async run(argv) {
    const { values } = parseFlags(argv, {
      listen: { type: 'string' },
      upstream: { type: 'string' },
      salt: { type: 'string' },
      name: { type: 'string' },
      ndjson: { type: 'boolean' },
      trace: { type: 'string' },
      'snap-len': { type: 'string' },
      ceiling: { type: 'string' },
      'control-version': { type: 'string' },
      'index-table': { type: 'string' },
      'stall-ms': { type: 'string' },
      'forward-only': { type: 'boolean' },
      help: { type: 'boolean' },
    });
    if (values.help) {
      process.stdout.write(USAGE + '\n');
      return 0;
    }
    const listen = listenFlag(values.listen);
    if (values.upstream === undefined) throw new UsageError('--upstream HOST:PORT is required');
    const upstream = hostPortFlag(values.upstream, 'upstream', '');
    const saltHex = sessionSaltFlag(values.salt).hex;
    if (values.ndjson && values.trace !== undefined)
      throw new UsageError('--ndjson and --trace exclude each other');
    if (values.name !== undefined && !/^[\w.-]{1,48}$/.test(values.name))
      throw new UsageError(
        `--name must be letters, digits, '.', '_' or '-' (at most 48), got '${values.name}'`,
      );
    const tracePath = values.trace;
    checkOutputs([{ label: '--trace', path: tracePath }]);
    // Every number checked before the trace file is opened or the port taken.
    const snapLen = numberFlag(values['snap-len'], 'snap-len', 'snapLen', 64 * 1024);
    const ceiling = numberFlag(values.ceiling, 'ceiling', 'ceiling', DEFAULT_FRAME_CEILING);
    const controlVersion = optionalNumberFlag(values['control-version'], 'control-version', 'version');
    const stallMs = numberFlag(values['stall-ms'], 'stall-ms', 'stallMs', 10_000);
    const salt = saltFromHex(saltHex);
    const indexTable = indexTableFlag(values['index-table']);
    const trace =
      tracePath === undefined
        ? null
        : new CaptureTraceWriter(
            TraceWriter.toFile(
              tracePath,
              captureTraceHeader({
                salt,
                startedAt: Date.now(),
                producer: 'relay-lab tap',
                snapLen,
                config: { controlIndexTable: indexTable },
              }),
            ),
          );
    const tap = await TapProxy.start({
      listenHost: listen.host,
      listenPort: listen.port,
      upstreamHost: upstream.host,
      upstreamPort: upstream.port,
      mac: nodeMac(salt),
      name: values.name,
      snapLen,
      ceiling,
      controlVersion,
      indexTable,
      stallMs,
      forwardOnly: values['forward-only'],
      onUnit: (link, u) => {
        if (trace) trace.unit(link, u);
        else if (values.ndjson) process.stdout.write(JSON.stringify(unitLineOf(link.id, u)) + '\n');
        else
          process.stderr.write(
            `${u.t.toFixed(1).padStart(9)} ${link.id} ${u.dir.padEnd(4)} ${u.summary}${u.verdict === 'ok' ? '' : ` [${u.verdict} ${u.code}: ${u.message}]`}\n`,
          );
      },
      onClose: (link, by, reset, t) => {
        trace?.closed(link, by, reset, t);
        if (!values.ndjson)
          process.stderr.write(
            `tap: ${link?.id ?? 'connection'} closed by the ${by}${reset ? ' (reset)' : ''}\n`,
          );
      },
      onLog: (level, message) => {
        trace?.log(level, message, tap.now());
        process.stderr.write(`tap ${level}: ${message}\n`);
      },
    });
    process.stderr.write(
      `tap listening on ${listen.host}:${tap.port}, upstream ${upstream.host}:${upstream.port}\n`,
    );
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    await tap.close();
    if (trace) {
      await trace.close();
      process.stderr.write(`tap: trace saved to ${tracePath}\n`);
    }
    return 0;
  },
};
