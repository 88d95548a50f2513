// The two placements of a tap the bench times: `relay-lab tap` as its own
// process (how a person puts one between a relay and the controller), and a
// TapProxy in the bench's own event loop (as the engine's taps sit beside its
// relays). Both count the units they decoded, so the bench can wait for the
// decoding of one send to finish before timing the next.
import readline from 'node:readline';
import type { Mac } from '@shared/wire/mac';
import { relayLabBin } from '../chaos/runner';
import { spawnTied } from '../shell-common/tied-spawn';
import { TapProxy } from './tap-proxy';

export interface BenchedTap {
  port: number;
  units(): number;
  close(): Promise<void>;
}

export async function startTapHere(
  mac: Mac,
  upstreamPort: number,
  o: { decodeInline?: boolean; forwardOnly?: boolean } = {},
): Promise<BenchedTap> {
  let units = 0;
  const tap = await TapProxy.start({
    listenPort: 0,
    upstreamHost: '127.0.0.1',
    upstreamPort,
    mac,
    decodeInline: o.decodeInline,
    forwardOnly: o.forwardOnly,
    onUnit: () => units++,
  });
  return { port: tap.port, units: () => units, close: () => tap.close() };
}

/**
 * `relay-lab tap --ndjson` on a kernel-chosen port; each stdout line is one decoded unit (none with
 * forwardOnly). With passive it listens on nothing: `port` is the upstream's own, and the tap
 * watches it on loopback.
 */
export async function startTapProcess(
  upstreamPort: number,
  saltHex: string,
  o: { forwardOnly?: boolean; passive?: boolean } = {},
): Promise<BenchedTap> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.NODE_EXTRA_CA_CERTS; // a child starts faster without it
  const child = spawnTied(
    process.execPath,
    [
      relayLabBin(),
      'tap',
      ...(o.passive ? ['--passive'] : ['--listen', '0']),
      '--upstream',
      `127.0.0.1:${upstreamPort}`,
      '--salt',
      saltHex,
      '--ndjson',
      ...(o.forwardOnly ? ['--forward-only'] : []),
    ],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let units = 0;
  readline.createInterface({ input: child.stdout! }).on('line', () => units++);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const port = await new Promise<number>((resolve, reject) => {
    let err = '';
    child.stderr!.on('data', (d: Buffer) => {
      err = (err + d.toString()).slice(-4000);
      const m = /tap listening on [^\s]+:(\d+),/.exec(err);
      if (m) resolve(Number(m[1]));
      if (/tap watching lo/.test(err)) resolve(upstreamPort);
    });
    child.once('exit', (code) =>
      reject(new Error(`relay-lab tap exited (${code}) before listening: ${err.trim()}`)),
    );
  });
  return {
    port,
    units: () => units,
    close: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
