// The passive tap on real sockets and the kernel's real capture: a relay's
// uplink straight to its server (no hop), watched on lo. Where tcpdump may
// not capture (not root, no CAP_NET_RAW, not installed) the tests say so and
// skip; CI runs as root with tcpdump installed (.ci/run), and there they must run.
import { describe, expect, it } from 'vitest';
import net from 'node:net';
import { encodeChannelMagic } from '@shared/wire/channel';
import { encodeMuxRecord } from '@shared/wire/mux';
import { encodeRoundFrame } from '@shared/wire/round-frame';
import { saltFromHex } from '@shared/wire/salt';
import { tensorFromValues } from '@shared/wire/tensor';
import { nodeMac } from '../crypto/node-mac';
import type { TraceLink } from '../lab/trace/format';
import type { DecodedUnit } from './stream-decoder';
import { PassiveTap, PassiveTapError } from './passive-tap';

const mac = nodeMac(saltFromHex('00112233445566778899aabbccddeeff'));

async function sinkServer() {
  const got: number[] = [];
  const server = net.createServer((s) => {
    s.on('error', () => {});
    let n = 0;
    got.push(0);
    const i = got.length - 1;
    s.on('data', (b: Buffer) => {
      n += b.length;
      got[i] = n;
    });
    s.on('end', () => s.end());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as net.AddressInfo).port, got };
}

/** The tap, or null (and why, printed) where this machine cannot capture on lo. */
async function tapOrSkip(
  port: number,
  units: { link: TraceLink; u: DecodedUnit }[],
  closes: string[],
  logs: string[] = [],
) {
  try {
    return await PassiveTap.start({
      serverHost: '127.0.0.1',
      serverPort: port,
      mac,
      name: 'h0.uplink',
      onUnit: (link, u) => units.push({ link, u }),
      onClose: (_l, by, reset) => closes.push(`${by}${reset ? ' reset' : ''}`),
      onLog: (level, message) => logs.push(`${level}: ${message}`),
    });
  } catch (e) {
    if (!(e instanceof PassiveTapError) || e.code !== 'NO_CAPTURE') throw e;
    console.log(`passive tap skipped: ${e.message}`);
    expect(process.env.CI === 'true' && process.getuid?.() === 0).toBe(false);
    return null;
  }
}

function uplink(values: number): Uint8Array[] {
  const payload = encodeRoundFrame(
    {
      roundKind: 0,
      weight: 1,
      tensors: [
        tensorFromValues(
          0,
          [values],
          new Float32Array(values).map((_, i) => i % 7),
        ),
      ],
    },
    mac,
  );
  return [
    encodeChannelMagic('data'),
    encodeMuxRecord({ kind: 'Control', msg: { type: 'Hello', host: 'h0', ranks: [0, 1] } }, mac),
    encodeMuxRecord({ kind: 'HostFrame', payload }, mac),
    encodeMuxRecord({ kind: 'HostFrame', payload }, mac),
  ];
}

async function send(port: number, chunks: Uint8Array[]) {
  const c = net.connect({ port, host: '127.0.0.1' });
  await new Promise((r) => c.once('connect', r));
  for (const ch of chunks) c.write(ch);
  c.end();
  await new Promise((r) => c.once('close', r));
}

describe('passive tap', () => {
  it('decodes a relay uplink it is not in the path of, named by its Hello, units in order', async () => {
    const sink = await sinkServer();
    const units: { link: TraceLink; u: DecodedUnit }[] = [];
    const closes: string[] = [];
    const tap = await tapOrSkip(sink.port, units, closes);
    if (!tap) return sink.server.close();
    // Two records of 2 MiB: each spans many loopback packets, and the reader is held across them.
    const chunks = uplink(512 * 1024);
    await send(sink.port, chunks);
    await tap.close();
    sink.server.close();
    expect(sink.got).toEqual([chunks.reduce((a, b) => a + b.length, 0)]);
    expect(
      units.map(
        (x) => `${x.link.id} ${x.u.kind} ${x.u.verdict}${x.u.code ? ` ${x.u.code} ${x.u.message}` : ''}`,
      ),
    ).toEqual([
      'h0.uplink.data DATA magic ok',
      'h0.uplink.data Hello ok',
      'h0.uplink.data HostFrame ok',
      'h0.uplink.data HostFrame ok',
    ]);
    expect(closes).toEqual(['client']);
    // Wire times from the capture: in order, and within this test's life.
    const ts = units.map((x) => x.u.t);
    expect([...ts].sort((a, b) => a - b)).toEqual(ts);
    expect(tap.packets).toBeGreaterThan(4);
  }, 60_000);

  it('watches every connection to the port, each its own link, and ignores other ports', async () => {
    const sink = await sinkServer();
    const other = await sinkServer();
    const units: { link: TraceLink; u: DecodedUnit }[] = [];
    const tap = await tapOrSkip(sink.port, units, []);
    if (!tap) return (sink.server.close(), other.server.close());
    const small = uplink(16);
    await Promise.all([send(sink.port, small), send(sink.port, small), send(other.port, small)]);
    await tap.close();
    sink.server.close();
    other.server.close();
    const conns = new Set(units.map((x) => x.link.clientPort));
    expect(units.filter((x) => x.u.kind === 'HostFrame')).toHaveLength(4);
    expect(conns.size).toBe(2);
  }, 60_000);

  it('decodes record after record sent back to back, none held back until it closes', async () => {
    const sink = await sinkServer();
    const units: { link: TraceLink; u: DecodedUnit }[] = [];
    const logs: string[] = [];
    const tap = await tapOrSkip(sink.port, units, [], logs);
    if (!tap) return sink.server.close();
    // Two 1 MiB records per connection, 16 MiB in all: under the most the reader is held across
    // (32 MiB) even when this busy thread, which also runs the tap, polls late.
    const chunks = uplink(256 * 1024);
    for (let i = 0; i < 8; i++) await send(sink.port, chunks);
    // Each connection's units are in before the tap closes (close reads the ring's rest: not this).
    for (let i = 0; i < 2000 && units.length < 32; i++) await new Promise((r) => setTimeout(r, 10));
    const before = units.length;
    await tap.close();
    sink.server.close();
    expect(before).toBe(32);
    expect(units.filter((x) => x.u.verdict !== 'ok').map((x) => `${x.u.kind} ${x.u.code}`)).toEqual([]);
    expect(logs).toEqual([]);
  }, 60_000);

  it('refuses a server that is not on loopback, by name', async () => {
    await expect(
      PassiveTap.start({ serverHost: '10.1.2.3', serverPort: 1, mac, onUnit: () => {} }),
    ).rejects.toMatchObject({ code: 'NOT_LOOPBACK' });
  });
});
