// relay-lab controller: the controller (data channel) and the coordinator
// (control channel) on one port, channel-magic dispatch, as a standalone
// process so relays and ranks on other machines can join (CLI.md 3).
import { DEFAULT_CONTROL_VERSION, DEFAULT_DATA_VERSION, DEFAULT_FRAME_CEILING } from '@shared/wire/constants';
import { nodeMac } from '../../crypto/node-mac';
import { closeServer, listen, serverPort } from '../../engine/conn';
import { Controller, type ControllerEvent } from '../../engine/controller';
import { Coordinator } from '../../engine/coordinator';
import { DeadRanks } from '../../engine/dead-ranks';
import { PortMux } from '../../engine/port-mux';
import { Tap } from '../../engine/tap';
import { choiceFlag, numberFlag, parseFlags, printJson, UsageError } from '../args';
import { INDEX_TABLE_USAGE, indexTableFlag, portFlag, sessionSaltFlag, worldSizeFlag } from './role-flags';
import type { Command } from './types';

/** How long the coordinator waits for its relays to close the control connections after the reduce. */
const CLOSE_GRACE_MS = 5000;

export const controllerCommand: Command = {
  summary: 'run the controller and coordinator alone (one port for both channels)',
  async run(argv) {
    const { values } = parseFlags(argv, {
      port: { type: 'string' },
      listen: { type: 'string' },
      'world-size': { type: 'string' },
      salt: { type: 'string' },
      policy: { type: 'string' },
      mode: { type: 'string' },
      'staleness-ms': { type: 'string' },
      'data-version': { type: 'string' },
      'control-version': { type: 'string' },
      'index-table': { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean' },
    });
    if (values.help) {
      process.stdout.write(
        'usage: relay-lab controller --world-size N --salt HEX [--port P (1337; 0 = any)] [--listen ADDR] [--policy elastic|strict]\n' +
          `  [--mode fold|forward|direct] [--staleness-ms MS] [${INDEX_TABLE_USAGE}] [--json]\n`,
      );
      return 0;
    }
    if (values['world-size'] === undefined) throw new UsageError('--world-size N is required');
    const worldSize = worldSizeFlag(values['world-size']);
    const salt = sessionSaltFlag(values.salt);
    const port = portFlag(values.port, 'port', 1337);
    const address = values.listen ?? '127.0.0.1';
    const policy = choiceFlag(values.policy, 'policy', ['elastic', 'strict'] as const, 'elastic');
    const mode = choiceFlag(values.mode, 'mode', ['fold', 'forward', 'direct'] as const, 'fold');
    const stalenessMs = numberFlag(values['staleness-ms'], 'staleness-ms', 'stalenessMs', 3000);
    const dataVersion = numberFlag(values['data-version'], 'data-version', 'version', DEFAULT_DATA_VERSION);
    const controlVersion = numberFlag(
      values['control-version'],
      'control-version',
      'version',
      DEFAULT_CONTROL_VERSION,
    );
    const indexTable = indexTableFlag(values['index-table']);

    const mac = nodeMac(salt.bytes);
    const tap = new Tap({ snapLen: 0 });
    const dead = new DeadRanks(worldSize);
    const controller = new Controller({
      worldSize,
      mac,
      mode,
      policy,
      ceiling: DEFAULT_FRAME_CEILING,
      dataVersion,
      dead,
      tap,
    });
    const coordinator = new Coordinator({
      worldSize,
      mac,
      controlVersion,
      indexTable,
      dead,
      stalenessMs,
      tap,
      direct: mode === 'direct',
    });
    // The control traffic a topology session drives (round-driver.ts): StartEpoch to every rank
    // once all are in, a SyncNow to the live ranks for each round, Shutdown when the reduce ends.
    // Standalone ranks reduce unpaced and need none of it, but a paced rank, a flodl worker or
    // a tap on the control channel sees the same exchange as in the lab.
    const live = () => Array.from({ length: worldSize }, (_, r) => r).filter((r) => !dead.isDead(r));
    coordinator.on((e) => {
      if (e.type !== 'ready') return;
      for (let r = 0; r < worldSize; r++)
        coordinator.send(r, { type: 'StartEpoch', epoch: 0, partitionOffset: r * 1024, partitionSize: 1024 });
      coordinator.broadcast({ type: 'SyncNow' }, live());
    });
    controller.on((e) => {
      if (e.type === 'round' && coordinator.ready) coordinator.broadcast({ type: 'SyncNow' }, live());
    });
    // RankExit records the relays sent up the control channel (informational, WIRE.md 4.3).
    const rankExits = new Set<number>();
    // What went down the control channel, by message ("SyncNow to rank 1" counts as SyncNow).
    const controlDown: Record<string, number> = {};
    tap.onRecord((r) => {
      if (r.dir === 'down' && r.link.endsWith('.control') && / to rank \d+$/.test(r.summary)) {
        const what = r.summary.replace(/ to rank \d+$/, '');
        controlDown[what] = (controlDown[what] ?? 0) + 1;
      }
      if (r.kind === 'RankExit' && r.rank !== undefined && r.link.endsWith('.uplink.control'))
        rankExits.add(r.rank);
    });
    const rounds: Extract<ControllerEvent, { type: 'round' }>[] = [];
    const errors: string[] = [];
    let ended: Extract<ControllerEvent, { type: 'shutdown' }> | null = null;
    controller.on((e) => {
      if (e.type === 'round') {
        rounds.push(e);
        process.stderr.write(`round ${e.round}: hosts [${e.hosts}] weight ${e.weight}\n`);
      } else if (e.type === 'error') {
        errors.push(e.message);
        process.stderr.write(`controller: ${e.message}\n`);
      } else if (e.type === 'declareDead') process.stderr.write(`DeclareDead rank ${e.rank} -> h${e.host}\n`);
      else if (e.type === 'shutdown') ended = e;
    });
    coordinator.on((e) => {
      if (e.type === 'stale')
        process.stderr.write(`rank ${e.rank} declared dead: no heartbeat for ${Math.round(e.silentMs)} ms\n`);
      if (e.type === 'error') process.stderr.write(`coordinator: ${e.message}\n`);
    });
    let server: Awaited<ReturnType<typeof listen>>;
    try {
      server = await listen(address, port);
    } catch (e) {
      const code = (e as { code?: string }).code ?? 'LISTEN_FAILED';
      process.stderr.write(
        `relay-lab controller: ${code}: cannot listen on ${address}:${port} (${(e as Error).message})\n`,
      );
      return 1;
    }
    const mux = new PortMux(server, {
      handlers: { data: (c, h) => controller.attach(c, h), control: (c, h) => coordinator.attach(c, h) },
      onDrop: (reason) => process.stderr.write(`dropped a connection: ${reason}\n`),
    });
    const boundPort = serverPort(server);
    // Heard from before the line that says it is listening (as in relay-lab tap and relay).
    const stop = () => void controller.stop('interrupted');
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    process.stderr.write(
      `controller listening on ${address}:${boundPort} (world size ${worldSize}, ${mode}, ${policy})\n`,
    );
    await controller.finished();
    if (coordinator.ready) coordinator.broadcast({ type: 'Shutdown' }, live());
    // flodl's coordinator reads until its relays close: a relay's last RankExit comes after the
    // data reduce has ended. A relay that never closes is not waited for past the grace.
    const closed = await coordinator.whenClosed(CLOSE_GRACE_MS);
    if (!closed) process.stderr.write(`coordinator: a relay kept its control connection open; closed it\n`);
    coordinator.stop();
    mux.destroyAll();
    await closeServer(server);
    const end = ended as Extract<ControllerEvent, { type: 'shutdown' }> | null;
    const verdict = end?.error || rounds.length === 0 ? 'error' : 'ok';
    if (values.json) {
      printJson({
        role: 'controller',
        port: boundPort,
        worldSize,
        mode,
        policy,
        roundsCompleted: rounds.length,
        rounds: rounds.map((r) => ({ round: r.round, hosts: r.hosts, ranks: r.ranks, weight: r.weight })),
        links: tap.linkViews(),
        dead: dead.list(),
        rankExits: [...rankExits].sort((a, b) => a - b),
        controlDown,
        errors,
        ended: end?.reason ?? 'stopped',
        verdict,
      });
    }
    return verdict === 'ok' ? 0 : 1;
  },
};
