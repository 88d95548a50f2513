// WIRE.md 6.8, the payload-only ControlFrame MAC: a Shutdown captured on the
// wire and replayed with another msg_kind. Under v1 (MAC over the payload
// only, labelled historical in the codec) the tampered frame verifies and is
// accepted as the other kind; under v2 (MAC over kind || len || payload) it is
// rejected with HMAC_MISMATCH. The capture and the replay each cross a real
// socket as a rank's control connection carries them (handshake, len frame).
import { randomBytes } from 'node:crypto';
import { CONTROL_FRAME_HEADER_LEN, LEN_PREFIX_LEN } from '@shared/wire/constants';
import {
  decodeControlFrame,
  encodeControlFrame,
  MSG_KIND_CONTROL,
  MSG_KIND_HEARTBEAT,
  MSG_KIND_NAMES,
} from '@shared/wire/control-frame';
import { encodeControlMsg } from '@shared/wire/control-msgs';
import { isWireError } from '@shared/wire/errors';
import { bytesToHex } from '@shared/wire/bytes';
import { encodeControlHandshake } from '@shared/wire/handshake';
import { encodeLenFrame } from '@shared/wire/len-frame';
import { nodeMac } from '../../crypto/node-mac';
import { loopbackPair, sleep, type LoopbackPair } from './loopback';
import type { Scenario, ScenarioContext } from './types';
import { SocketTrace } from './socket-trace';

/**
 * Sends a ControlFrame as a rank does on its control connection to its relay
 * (the control handshake, then the len-framed frame, WIRE.md 3.6) over a fresh
 * loopback connection, and returns the frame the receiver got. `onConnect`
 * sees each connection first (the window's trace of it).
 */
async function overTheWire(
  frame: Uint8Array,
  hello: Uint8Array,
  onConnect: (pair: LoopbackPair) => ((chunk: Uint8Array) => void) | undefined,
): Promise<Uint8Array> {
  const pair = await loopbackPair();
  const seen = onConnect(pair);
  const wire = Buffer.concat([hello, encodeLenFrame(frame)]);
  const got: Buffer[] = [];
  let n = 0;
  pair.peer.on('data', (c: Buffer) => {
    got.push(c);
    n += c.length;
    seen?.(c);
  });
  pair.client.write(wire);
  const until = performance.now() + 2000;
  while (n < wire.length && performance.now() < until) await sleep(2);
  await pair.close();
  return Buffer.concat(got).subarray(hello.length + LEN_PREFIX_LEN);
}

/** Bytes of the replayed unit (a len frame) that the attacker rewrote: msg_kind, after the 4-byte prefix. */
const MSG_KIND_MARK = { offset: LEN_PREFIX_LEN + 16, length: 4 };

async function run(version: 1 | 2, ctx: ScenarioContext) {
  const salt = randomBytes(16);
  const mac = nodeMac(salt);
  const hello = encodeControlHandshake({ version, rank: 0, worldSize: 1 }, mac);
  // The window's runs: both connections, the capture's and the replay's, as one rank's control link.
  let trace = null as SocketTrace | null;
  const onConnect = (pair: LoopbackPair) => {
    const clientPort = pair.client.localPort ?? 0;
    if (trace) trace.reconnect(clientPort);
    else
      trace = SocketTrace.open(
        ctx,
        mac,
        salt,
        pair.port,
        {
          id: 'h0.r0.control',
          channel: 'control',
          kind: 'loopback',
          from: 'rank 0',
          to: 'relay',
          rank: 0,
          clientPort,
        },
        { controlVersion: version },
      );
    return trace ? (c: Uint8Array) => trace!.feed('up', c) : undefined;
  };
  const original = encodeControlFrame(
    { version, msgKind: MSG_KIND_CONTROL, payload: encodeControlMsg({ type: 'Shutdown' }) },
    mac,
  );
  let replayed: Uint8Array;
  let captured: Uint8Array;
  try {
    captured = await overTheWire(original, hello, onConnect);
    // The attacker rewrites msg_kind (bytes 16..20) and replays the frame.
    const tampered = new Uint8Array(captured);
    new DataView(tampered.buffer).setUint32(16, MSG_KIND_HEARTBEAT, true);
    replayed = await overTheWire(tampered, hello, onConnect);
  } catch (e) {
    await (trace as SocketTrace | null)?.close();
    throw e;
  }
  let accepted: { msgKind: string; payloadHex: string } | null = null;
  let rejected: { code: string; message: string } | null = null;
  try {
    const f = decodeControlFrame(replayed, mac, { version });
    accepted = { msgKind: MSG_KIND_NAMES[f.msgKind] ?? String(f.msgKind), payloadHex: bytesToHex(f.payload) };
  } catch (e) {
    rejected = { code: isWireError(e) ? e.code : 'ERROR', message: (e as Error).message };
  }
  if (trace) {
    // Units up: the capture's handshake and frame, then the replay's handshake and frame (the 4th).
    trace.decisive('up', 3, {
      why: accepted
        ? "the replayed Shutdown, its msg_kind rewritten to Heartbeat: v1's MAC covers the payload only, so it verified and was accepted as a Heartbeat"
        : `the replayed Shutdown, its msg_kind rewritten to Heartbeat: v2's MAC covers kind || len || payload, so it was rejected (${rejected?.code})`,
      mark: { ...MSG_KIND_MARK, label: 'msg_kind rewritten: Control -> Heartbeat' },
    });
    await trace.close();
  }
  return {
    controlVersion: version,
    macCovers: version === 1 ? 'payload' : 'kind || len || payload',
    captured: {
      msgKind: MSG_KIND_NAMES[MSG_KIND_CONTROL],
      bytes: captured.length,
      headerHex: bytesToHex(captured.subarray(0, CONTROL_FRAME_HEADER_LEN)),
    },
    replayedAs: MSG_KIND_NAMES[MSG_KIND_HEARTBEAT],
    accepted,
    rejected,
  };
}

export const controlReplay: Scenario = {
  number: 6,
  findingKind: 'hmac',
  name: 'control-replay',
  title: 'A captured control frame replayed as another kind',
  incident: 'WIRE.md 6.8',
  historicalBehaviour: 'lab-only historical behaviour: control protocol v1, MAC over the payload only',
  narrative:
    'A Shutdown ControlFrame is captured on a socket, its msg_kind rewritten to Heartbeat, and replayed. ' +
    'Historical (control protocol v1, MAC over the payload only): the tampered frame verifies and is accepted as a Heartbeat. ' +
    'flodl 0.7 (v2, MAC over kind || len || payload): HMAC_MISMATCH.',
  async historical(ctx) {
    const ev = await run(1, ctx);
    return { reproduced: ev.accepted?.msgKind === 'Heartbeat', evidence: ev };
  },
  async current(ctx) {
    const ev = await run(2, ctx);
    return { held: ev.accepted === null && ev.rejected?.code === 'HMAC_MISMATCH', evidence: ev };
  },
};
