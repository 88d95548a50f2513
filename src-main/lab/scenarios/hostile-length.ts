// WIRE.md 6.4, the unauthenticated-length memory DoS: one garbage mux header
// declaring a payload of 0xFFFFFFFF bytes. Historical: a reader that trusts
// the length allocates it before any MAC can be checked (run in its own
// process so the lab is never at risk; its memory is read before and after).
// flodl 0.7: the engine's reader checks the length against the frame ceiling
// as soon as the length field is in, before buffering anything.
import fs from 'node:fs';
import type net from 'node:net';
import {
  U32_MAX,
  MUX_HEADER_LEN,
  MUX_PROTOCOL_VERSION,
  MUX_RECORD_MAGIC,
  REC_HOST_FRAME,
  deriveFrameCeiling,
} from '@shared/wire/constants';
import { isWireError } from '@shared/wire/errors';
import { closeServer, listen, serverPort } from '../../engine/conn';
import { MuxReader } from '@shared/wire/mux-reader';
import { runScript } from './child';
import { loopbackPair, sleep } from './loopback';
import type { Scenario, ScenarioContext } from './types';
import { randomBytes } from 'node:crypto';
import { nodeMac } from '../../crypto/node-mac';
import { SocketTrace } from './socket-trace';

/** The window's runs: the one hostile header on the wire, as a trace, its payload_len marked. */
async function traceHeader(ctx: ScenarioContext, port: number, why: string): Promise<void> {
  const salt = randomBytes(16);
  const trace = SocketTrace.open(ctx, nodeMac(salt), salt, port, { from: 'hostile peer', to: 'reader' });
  if (!trace) return;
  trace.feed('up', hostileHeader());
  await trace.close();
  trace.decisive('up', 0, { why, mark: { offset: 13, length: 4, label: 'payload_len = 0xFFFFFFFF' } });
}

const MODEL_BYTES = 4096;

/** A mux header with a valid magic and version, kind HostFrame, payload_len 0xFFFFFFFF and a garbage tag. */
function hostileHeader(): Uint8Array {
  const h = Buffer.alloc(MUX_HEADER_LEN, 0xab);
  h.writeUInt32LE(MUX_RECORD_MAGIC, 0);
  h.writeUInt32LE(MUX_PROTOCOL_VERSION, 4);
  h[8] = REC_HOST_FRAME;
  h.writeUInt32LE(0, 9);
  h.writeUInt32LE(U32_MAX, 13);
  return h;
}

// The historical reader: reads a 25-byte header, trusts payload_len and allocates it up front.
const TRUSTING_READER = `
const net = require('node:net');
const fs = require('node:fs');
const port = Number(process.argv[process.argv.length - 1]);
const vm = () => { const m = /VmSize:\\s+(\\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8')); return m ? Number(m[1]) * 1024 : null; };
const mem = () => { const u = process.memoryUsage(); return { rss: u.rss, arrayBuffers: u.arrayBuffers, vmSize: vm() }; };
const s = net.connect({ host: '127.0.0.1', port });
let head = Buffer.alloc(0);
let held = null;
s.on('data', (c) => {
  if (held) return;
  head = Buffer.concat([head, c]);
  if (head.length < 25) return;
  const len = head.readUInt32LE(13);
  const before = mem();
  let error = null;
  try { held = new Uint8Array(len); } catch (e) { error = String(e && e.message || e); }
  process.stdout.write(JSON.stringify({ declared: len, allocated: held ? held.length : 0, error, before, after: mem() }) + '\\n', () => process.exit(0));
});
s.on('error', () => process.exit(1));
`;

function vmSize(): number | null {
  try {
    const m = /VmSize:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}
const mem = () => {
  const u = process.memoryUsage();
  return { rss: u.rss, arrayBuffers: u.arrayBuffers, vmSize: vmSize() };
};

export const hostileLength: Scenario = {
  number: 4,
  findingKind: 'rejected',
  name: 'hostile-length',
  title: 'A hostile length (0xFFFFFFFF) and the frame ceiling',
  incident: 'WIRE.md 6.4',
  historicalBehaviour:
    'lab-only historical behaviour: a reader that allocates an unauthenticated length (its own process)',
  narrative:
    'One mux header declares a 4 GiB payload with a garbage MAC tag. ' +
    "Historical: a reader that trusts the length allocates it before the MAC can be checked; compare the reader process's arrayBuffers/VmSize before and after. " +
    `flodl 0.7: the length is checked against the frame ceiling (max(2 x model, 64 MiB) = ${deriveFrameCeiling(MODEL_BYTES)} B here) once the 25-byte header is complete, before any payload byte is buffered (flodl's finish_read): OVER_CEILING after 25 bytes, memory flat.`,
  async historical(ctx) {
    const server = await listen('127.0.0.1', 0);
    const accepted = new Promise<net.Socket>((r) => server.once('connection', r));
    const reader = runScript(TRUSTING_READER, [String(serverPort(server))]);
    ctx.track(reader.pid);
    try {
      const sock = await accepted;
      sock.on('error', () => {});
      sock.write(hostileHeader());
      const rep = (await reader.next((v) => 'declared' in v, 15_000)) as {
        declared: number;
        allocated: number;
        error: string | null;
        before: Record<string, number>;
        after: Record<string, number>;
      };
      sock.destroy();
      const grew = rep.after.arrayBuffers - rep.before.arrayBuffers;
      await traceHeader(
        ctx,
        serverPort(server),
        `the trusting reader took payload_len from this unauthenticated header and allocated ${rep.allocated} bytes`,
      );
      const evidence = {
        declaredBytes: rep.declared,
        allocatedBytes: rep.allocated,
        allocationError: rep.error,
        readerMemoryBefore: rep.before,
        readerMemoryAfter: rep.after,
        arrayBuffersGrewBy: grew,
        vmSizeGrewBy:
          rep.after.vmSize !== null && rep.before.vmSize !== null
            ? rep.after.vmSize - rep.before.vmSize
            : null,
      };
      // Reproduced: one unauthenticated header made the reader allocate (or fail to allocate) ~4 GiB.
      return {
        reproduced: rep.declared === U32_MAX && (rep.allocated === U32_MAX || rep.error !== null),
        evidence,
      };
    } finally {
      await reader.kill();
      await closeServer(server);
    }
  },
  async current(ctx) {
    const ceiling = deriveFrameCeiling(MODEL_BYTES);
    const pair = await loopbackPair();
    let rejected: { code: string; message: string; afterBytes: number } | null = null;
    let seen = 0;
    const splitter = new MuxReader({
      ceiling,
      sink: { onStart: () => {}, onChunk: () => {}, onEnd: () => {} },
    });
    const before = mem();
    pair.peer.on('data', (c: Buffer) => {
      if (rejected) return;
      // Byte by byte, so the moment of rejection is visible.
      for (let i = 0; i < c.length && !rejected; i++) {
        seen++;
        try {
          splitter.push(c.subarray(i, i + 1));
        } catch (e) {
          rejected = {
            code: isWireError(e) ? e.code : 'ERROR',
            message: (e as Error).message,
            afterBytes: seen,
          };
          pair.peer.destroy();
        }
      }
    });
    try {
      pair.client.write(hostileHeader());
      const until = performance.now() + 2000;
      while (!rejected && performance.now() < until) await sleep(5);
    } finally {
      await pair.close();
    }
    const after = mem();
    const r = rejected as { code: string; message: string; afterBytes: number } | null;
    await traceHeader(
      ctx,
      pair.port,
      `the reader checked payload_len against the ${ceiling}-byte ceiling once the 25-byte header was in: ${r?.code ?? 'no rejection'} after ${r?.afterBytes ?? '?'} bytes`,
    );
    const evidence = {
      ceilingBytes: ceiling,
      rejected: r,
      memoryBefore: before,
      memoryAfter: after,
      arrayBuffersGrewBy: after.arrayBuffers - before.arrayBuffers,
      rssGrewBy: after.rss - before.rss,
    };
    // Held: rejected by the ceiling once the 25-byte header is in (flodl judges nothing before it), no large allocation.
    return {
      held:
        r?.code === 'OVER_CEILING' && r.afterBytes <= 25 && evidence.arrayBuffersGrewBy < 16 * 1024 * 1024,
      evidence,
    };
  },
};
