// A Slurm task's host agent (every task but the first): this node's relay
// and its ranks, driven by the job's engine over one authenticated
// connection (agent-protocol.ts). The relay runs here, on the ranks' node,
// and dials the controller on the engine's node, as flodl's relays do; the
// ranks are real processes on this node under a kernel parent-death signal,
// so when the agent ends (the engine closed the link, the job was
// cancelled, the node lost) nothing of the host outlives it. When the engine
// asks for them, the relay records its loopback legs on its own tap and the
// agent sends them on, bounded (leg-forwarder.ts).
import net from 'node:net';
import os from 'node:os';
import { nodeMac } from '../crypto/node-mac';
import { RANK_SPEC_ENV } from '../rank/spec';
import { Relay } from '../engine/relay';
import { rankEntryPath } from '../engine/rank-process';
import { nodeRankSpawner, type RankChild } from '../engine/rank-spawner';
import {
  agentMac,
  engineMac,
  jsonLines,
  line,
  macMatches,
  nonce,
  type AgentToEngine,
  type EngineToAgent,
} from './agent-protocol';
import { LegForwarder } from './leg-forwarder';

export interface HostAgentOptions {
  host: number;
  salt: Uint8Array;
  engine: { address: string; port: number; nonce: string };
  /** This node's name, for the engine's log. */
  node?: string;
  log?: (line: string) => void;
}

const SIGNALS = new Set(['SIGSTOP', 'SIGCONT', 'SIGKILL', 'SIGTERM']);
const STDERR_LINE_MAX = 4096;

/** Runs until the engine closes the link (or it fails); resolves with an exit status. */
export async function runHostAgent(opts: HostAgentOptions): Promise<number> {
  const log = opts.log ?? ((l: string) => process.stderr.write(`agent h${opts.host}: ${l}\n`));
  const socket = net.connect(opts.engine.port, opts.engine.address);
  socket.setNoDelay(true);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const ranks = new Map<number, RankChild>();
  let relay: Relay | null = null;
  let authed = false;
  const myNonce = nonce();
  let legs: LegForwarder | null = null;
  const write = (m: AgentToEngine) => {
    if (!socket.destroyed && !socket.writableEnded) socket.write(line(m));
  };
  // Leg units recorded before a message go before it (a relay event names its unit by seq).
  const send = (m: AgentToEngine) => {
    legs?.flush();
    write(m);
  };

  const teardown = async () => {
    for (const child of ranks.values()) child.signal('SIGKILL');
    if (relay) await relay.close().catch(() => {});
    relay = null;
    legs?.close();
  };

  const startRelay = async (o: Extract<EngineToAgent, { type: 'startRelay' }>['options']) => {
    try {
      if (relay) throw new Error('the relay is already started');
      const { legs: legOptions, ...relayOptions } = o;
      if (legOptions) legs = new LegForwarder(legOptions, write);
      relay = await Relay.listen({
        ...relayOptions,
        host: opts.host,
        mac: nodeMac(opts.salt),
        connectIntervalMs: 100,
        tap: legs?.tap,
      });
      // A record's seq is this node's tap's: the engine maps it to its own (or drops it).
      relay.on((event) => send({ type: 'relayEvent', event }));
      relay
        .start()
        .catch((e: Error) => send({ type: 'log', level: 'error', message: `relay: ${e.message}` }));
      send({ type: 'relayStarted', data: relay.dataPort, control: relay.controlPort });
    } catch (e) {
      send({ type: 'relayFailed', message: (e as Error).message });
    }
  };

  const spawnRank = (rank: number, spec: string) => {
    let parsed: { rank?: unknown };
    try {
      parsed = JSON.parse(spec) as { rank?: unknown };
    } catch {
      send({ type: 'rankError', rank, message: 'the rank spec is not JSON' });
      return;
    }
    if (parsed.rank !== rank || ranks.has(rank)) {
      send({
        type: 'rankError',
        rank,
        message: `refused to start rank ${rank} (spec names ${String(parsed.rank)})`,
      });
      return;
    }
    const env: NodeJS.ProcessEnv = { ...process.env, [RANK_SPEC_ENV]: spec };
    delete env.NODE_EXTRA_CA_CERTS;
    delete env.NODE_OPTIONS;
    const child = nodeRankSpawner(rankEntryPath(), env, {
      onMessage: (msg) => send({ type: 'rankMessage', rank, msg }),
      onExit: (code, signal) => send({ type: 'rankExit', rank, code, signal }),
      onError: (e) => send({ type: 'rankError', rank, message: e.message }),
      onStderrLine: (l) => send({ type: 'rankStderr', rank, line: l.slice(0, STDERR_LINE_MAX) }),
    });
    ranks.set(rank, child);
    // The same priority a local rank gets (rank-process.ts): the relay beside it stays on time.
    if (child.pid)
      try {
        os.setPriority(child.pid, 5);
      } catch {
        // not permitted here
      }
  };

  const handle = (m: EngineToAgent) => {
    if (!authed) {
      if (m.type !== 'welcome' || !macMatches(engineMac(opts.salt, opts.host, myNonce), m.mac)) {
        log('the engine did not prove it holds the session salt: closing');
        socket.destroy();
        return;
      }
      authed = true;
      return;
    }
    switch (m.type) {
      case 'startRelay':
        void startRelay(m.options);
        break;
      case 'spawnRank':
        if (Number.isInteger(m.rank) && typeof m.spec === 'string') spawnRank(m.rank, m.spec);
        break;
      case 'signal':
        if (SIGNALS.has(m.signal)) ranks.get(m.rank)?.signal(m.signal);
        break;
      case 'send':
        ranks.get(m.rank)?.send(m.msg);
        break;
      case 'killHost':
        relay?.destroy();
        for (const child of ranks.values()) child.signal('SIGKILL');
        break;
      case 'shutdown':
        // What the relay's tap still holds goes before the end.
        legs?.close();
        socket.end();
        break;
      case 'legAck':
        legs?.ack(m.bytes);
        break;
    }
  };

  const done = new Promise<number>((resolve) => {
    socket.on(
      'data',
      jsonLines(
        (m) => handle(m as EngineToAgent),
        (e) => {
          log(`engine link: ${e.message}`);
          socket.destroy();
        },
      ),
    );
    socket.on('error', (e) => log(`engine link: ${e.message}`));
    socket.on('close', () => {
      void teardown().then(() => resolve(authed ? 0 : 1));
    });
  });
  send({
    type: 'hello',
    host: opts.host,
    node: opts.node ?? os.hostname(),
    nonce: myNonce,
    mac: agentMac(opts.salt, opts.host, opts.engine.nonce),
  });
  return done;
}
