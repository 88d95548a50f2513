// relay-lab tap: a transparent TCP proxy put between a flodl peer and its
// upstream (a relay and the controller, a rank and its relay, a rank and the
// controller in direct mode) that decodes what crosses and reports each unit.
import { checkOutputs } from '../files';
import { saltFromHex } from '@shared/wire/salt';
import { DEFAULT_FRAME_CEILING } from '@shared/wire/constants';
import { nodeMac } from '../../crypto/node-mac';
import { TapProxy } from '../../capture/tap-proxy';
import { PassiveTap } from '../../capture/passive-tap';
import type { DecodedUnit } from '../../capture/stream-decoder';
import type { TraceLink } from '../../lab/trace/format';
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
       relay-lab tap --passive --upstream 127.0.0.1:PORT --salt HEX [the same output flags]

Point the peer (a relay's --controller, a rank's --data-port/--control-port)
at the tap's port; the tap dials the upstream for every connection and
forwards every byte unchanged both ways. --ndjson prints one JSON line per
unit on stdout; --trace writes a trace that 'relay-lab trace info' and the
window open. Without either, one line per unit on stderr. --forward-only
decodes nothing (a bare hop: the floor to read the tap's own cost against).

--passive puts nothing in the path: the peers keep talking to the upstream
port itself, and the tap decodes every connection to it from the kernel's
packet capture on loopback (tcpdump, root or CAP_NET_RAW), read after each
burst of bytes rather than under it. Loopback only.
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
      passive: { type: 'boolean' },
      help: { type: 'boolean' },
    });
    if (values.help) {
      process.stdout.write(USAGE + '\n');
      return 0;
    }
    if (values.passive && values.listen !== undefined)
      throw new UsageError('--passive takes no --listen: the peers keep their upstream port');
    if (values.passive && values['forward-only'])
      throw new UsageError('--passive and --forward-only exclude each other');
    const listen = values.passive ? null : listenFlag(values.listen);
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
    // Ctrl-C is heard from before the tap says it is ready: one that comes right after that line
    // stops it cleanly (installed after the line, a prompt Ctrl-C found the default action: killed).
    const stopAsked = new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    const decode = {
      mac: nodeMac(salt),
      name: values.name,
      snapLen,
      ceiling,
      controlVersion,
      indexTable,
      stallMs,
      onUnit: (link: TraceLink, u: DecodedUnit) => {
        if (trace) trace.unit(link, u);
        else if (values.ndjson) process.stdout.write(JSON.stringify(unitLineOf(link.id, u)) + '\n');
        else
          process.stderr.write(
            `${u.t.toFixed(1).padStart(9)} ${link.id} ${u.dir.padEnd(4)} ${u.summary}${u.verdict === 'ok' ? '' : ` [${u.verdict} ${u.code}: ${u.message}]`}\n`,
          );
      },
      onClose: (link: TraceLink | null, by: 'client' | 'server', reset: boolean, t: number) => {
        trace?.closed(link, by, reset, t);
        if (!values.ndjson)
          process.stderr.write(
            `tap: ${link?.id ?? 'connection'} closed by the ${by}${reset ? ' (reset)' : ''}\n`,
          );
      },
      onLog: (level: 'info' | 'warn' | 'error', message: string) => {
        trace?.log(level, message, tap.now());
        process.stderr.write(`tap ${level}: ${message}\n`);
      },
    };
    let tap: TapProxy | PassiveTap;
    try {
      if (listen) {
        const proxy = await TapProxy.start({
          ...decode,
          listenHost: listen.host,
          listenPort: listen.port,
          upstreamHost: upstream.host,
          upstreamPort: upstream.port,
          forwardOnly: values['forward-only'],
        });
        tap = proxy;
        process.stderr.write(
          `tap listening on ${listen.host}:${proxy.port}, upstream ${upstream.host}:${upstream.port}\n`,
        );
      } else {
        tap = await PassiveTap.start({ ...decode, serverHost: upstream.host, serverPort: upstream.port });
        process.stderr.write(
          `tap watching lo for connections to ${upstream.host}:${upstream.port} (passive: no hop)\n`,
        );
      }
    } catch (e) {
      // Nothing was watched: the trace begun for it is given up, no file made.
      await trace?.writer.abandon();
      throw e;
    }
    // A passive tap whose capture ends by itself stops too, and says so (exit 1): never blind.
    const ended = tap instanceof PassiveTap ? tap.captureEnded : new Promise<string>(() => {});
    const captureEnded = await Promise.race([stopAsked.then(() => null), ended]);
    await tap.close();
    if (trace) {
      await trace.close();
      process.stderr.write(`tap: trace saved to ${tracePath}\n`);
    }
    if (captureEnded) {
      process.stderr.write(`relay-lab tap: CAPTURE_ENDED: ${captureEnded}\n`);
      return 1;
    }
    return 0;
  },
};
