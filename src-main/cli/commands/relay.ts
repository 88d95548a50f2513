// relay-lab relay: one host's relay as a standalone process (CLI.md 3):
// loopback listeners for the host's ranks, one upstream connection per
// channel to the controller's port.
import { DEFAULT_CONTROL_VERSION, DEFAULT_DATA_VERSION, DEFAULT_FRAME_CEILING } from '@shared/wire/constants';
import { nodeMac } from '../../crypto/node-mac';
import { Relay } from '../../engine/relay';
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
      help: { type: 'boolean' },
    });
    if (values.help) {
      process.stdout.write(
        'usage: relay-lab relay --host NAME --ranks 0,1 --world-size N --salt HEX [--controller ADDR:PORT (127.0.0.1:1337)]\n' +
          '  [--data-port P (controller port + 4; 0 = any)] [--control-port P (+ 5)] [--mode fold|forward]\n',
      );
      return 0;
    }
    if (values['world-size'] === undefined) throw new UsageError('--world-size N is required');
    const worldSize = worldSizeFlag(values['world-size']);
    const ranks = ranksFlag(values.ranks, worldSize);
    const salt = sessionSaltFlag(values.salt);
    const upstream = hostPortFlag(values.controller, 'controller', '127.0.0.1:1337');
    const hostName = values.host ?? 'h0';
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
      ceiling: DEFAULT_FRAME_CEILING,
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
    process.stderr.write(
      `relay ${hostName} listening: data 127.0.0.1:${relay.dataPort} control 127.0.0.1:${relay.controlPort}\n`,
    );
    process.once('SIGINT', () => relay.destroy());
    process.once('SIGTERM', () => relay.destroy());
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
