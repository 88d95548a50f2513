// relay-lab relay: one host's relay as a standalone process (CLI.md 3):
// loopback listeners for the host's ranks, one upstream connection per
// channel to the controller's port.
import { DEFAULT_CONTROL_VERSION, DEFAULT_DATA_VERSION, DEFAULT_FRAME_CEILING } from '@shared/wire/constants';
import { nodeMac } from '../../crypto/node-mac';
import { Relay } from '../../engine/relay';
import {
  decodeRelaySpec,
  relaySpecFromEnv,
  RELAY_SPEC_ENV,
  RELAY_SPEC_ENV_OLD,
} from '@shared/lab/relay-spec';
import { parseSessionSalt } from '@shared/lab/session-salt';
import { choiceFlag, numberFlag, parseFlags, UsageError } from '../args';
import { hostPortFlag, portFlag, ranksFlag, sessionSaltFlag, worldSizeFlag } from './role-flags';
import type { Command } from './types';

export const relayCommand: Command = {
  summary: "run one host's relay alone (fold, or the lab-only forward mode)",
  async run(argv) {
    const { values } = parseFlags(argv, {
      host: { type: 'string' },
      controller: { type: 'string' },
      ranks: { type: 'string' },
      'world-size': { type: 'string' },
      salt: { type: 'string' },
      'data-port': { type: 'string' },
      'control-port': { type: 'string' },
      mode: { type: 'string' },
      'data-version': { type: 'string' },
      'control-version': { type: 'string' },
      'from-env': { type: 'boolean' },
      help: { type: 'boolean' },
    });
    if (values.help) {
      process.stdout.write(
        'usage: relay-lab relay --host NAME --ranks 0,1 --world-size N --salt HEX [--controller ADDR:PORT (127.0.0.1:1337)]\n' +
          '  [--data-port P (controller port + 4; 0 = any)] [--control-port P (+ 5)] [--mode fold|forward]\n' +
          `   or: relay-lab relay [--from-env]   (flodl's launch contract: the hex RelaySpec JSON in ${RELAY_SPEC_ENV} or ${RELAY_SPEC_ENV_OLD}; no flags at all reads it too when set)\n`,
      );
      return 0;
    }
    // flodl's contract (WIRE.md 4.2): --from-env, or no flags at all with the variable set.
    const env = relaySpecFromEnv(process.env);
    const fromEnv = values['from-env'] === true || (argv.length === 0 && env !== undefined);
    if (fromEnv) {
      const others = argv.filter((a) => a !== '--from-env');
      if (others.length > 0)
        throw new UsageError(`--from-env takes the whole spec from the environment; drop ${others[0]}`);
      if (!env)
        throw new UsageError(`--from-env: neither ${RELAY_SPEC_ENV} nor ${RELAY_SPEC_ENV_OLD} is set`);
    }
    const spec = fromEnv && env ? decodeRelaySpec(env.value, env.name) : undefined;
    if (spec && !spec.data_channel)
      throw new UsageError(
        `${env?.name}: data_channel is false (a GPU backend's relay); Relay Lab's relay carries the CPU data channel only`,
      );
    if (!spec && values['world-size'] === undefined) throw new UsageError('--world-size N is required');
    const worldSize = spec ? spec.world_size : worldSizeFlag(values['world-size']);
    const ranks = spec ? spec.ranks : ranksFlag(values.ranks, worldSize);
    const salt = spec ? parseSessionSalt(spec.salt_hex, 'salt_hex') : sessionSaltFlag(values.salt);
    const upstream = spec
      ? { host: spec.controller_host, port: spec.controller_port }
      : hostPortFlag(values.controller, 'controller', '127.0.0.1:1337');
    const hostName = spec ? spec.host : (values.host ?? 'h0');
    const mode = choiceFlag(values.mode, 'mode', ['fold', 'forward'] as const, 'fold');
    if (mode === 'forward')
      process.stderr.write('relay: forward mode is lab-only (flodl 0.7 folds on the relay)\n');
    const relay = await Relay.listen({
      host: 0,
      hostName,
      ranks,
      worldSize,
      mac: nodeMac(salt.bytes),
      mode,
      controllerAddress: upstream.host,
      controllerPort: upstream.port,
      dataPort: portFlag(values['data-port'], 'data-port', upstream.port + 4),
      controlPort: portFlag(values['control-port'], 'control-port', upstream.port + 5),
      dataVersion: numberFlag(values['data-version'], 'data-version', 'version', DEFAULT_DATA_VERSION),
      controlVersion: numberFlag(
        values['control-version'],
        'control-version',
        'version',
        DEFAULT_CONTROL_VERSION,
      ),
      // frame_ceiling_bytes 0 = unset: flodl's default ceiling.
      ceiling: spec && spec.frame_ceiling_bytes > 0 ? spec.frame_ceiling_bytes : DEFAULT_FRAME_CEILING,
    });
    let failed = false;
    let folds = 0;
    relay.on((e) => {
      if (e.type === 'folded') folds++;
      if (e.type === 'error') {
        failed = true;
        process.stderr.write(`relay ${hostName} (${e.channel}): ${e.message}\n`);
      }
      if (e.type === 'shutdown')
        process.stderr.write(`relay ${hostName}: ${e.channel} channel shut down: ${e.reason}\n`);
    });
    // Heard from before the line that says it is listening: a Ctrl-C sent the moment that line is
    // read must stop it, not find the default action (killed, nothing closed).
    process.once('SIGINT', () => relay.destroy());
    process.once('SIGTERM', () => relay.destroy());
    process.stderr.write(
      `relay ${hostName} listening: data 127.0.0.1:${relay.dataPort} control 127.0.0.1:${relay.controlPort}\n`,
    );
    try {
      await relay.start();
    } catch (e) {
      process.stderr.write(`relay ${hostName}: start failed: ${(e as Error).message}\n`);
      await relay.close();
      return 1;
    }
    await relay.finished();
    await relay.close();
    process.stderr.write(`relay ${hostName}: ${folds} rounds folded for ranks [${ranks}]\n`);
    return failed ? 1 : 0;
  },
};
