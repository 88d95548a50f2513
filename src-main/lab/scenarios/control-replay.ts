// WIRE.md 6.8, the payload-only ControlFrame MAC: a Shutdown captured on the
// wire and replayed with another msg_kind. Under v1 (MAC over the payload
// only, labelled historical in the codec) the tampered frame verifies and is
// accepted as the other kind; under v2 (MAC over kind || len || payload) it is
// rejected with HMAC_MISMATCH. The capture and the replay cross a real socket.
import { randomBytes } from 'node:crypto';
import { CONTROL_FRAME_HEADER_LEN } from '@shared/wire/constants';
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
import { nodeMac } from '../../crypto/node-mac';
import { loopbackPair, sleep } from './loopback';
import type { Scenario } from './types';

/** Sends `bytes` over a fresh loopback connection and returns what the receiver got. */
async function overTheWire(bytes: Uint8Array): Promise<Uint8Array> {
  const pair = await loopbackPair();
  const got: Buffer[] = [];
  let n = 0;
  pair.peer.on('data', (c: Buffer) => {
    got.push(c);
    n += c.length;
  });
  pair.client.write(bytes);
  const until = performance.now() + 2000;
  while (n < bytes.length && performance.now() < until) await sleep(2);
  await pair.close();
  return Buffer.concat(got);
}

async function run(version: 1 | 2) {
  const mac = nodeMac(randomBytes(16));
  const original = encodeControlFrame(
    { version, msgKind: MSG_KIND_CONTROL, payload: encodeControlMsg({ type: 'Shutdown' }) },
    mac,
  );
  const captured = await overTheWire(original);
  // The attacker rewrites msg_kind (bytes 16..20) and replays the frame.
  const tampered = new Uint8Array(captured);
  new DataView(tampered.buffer).setUint32(16, MSG_KIND_HEARTBEAT, true);
  const replayed = await overTheWire(tampered);
  let accepted: { msgKind: string; payloadHex: string } | null = null;
  let rejected: { code: string; message: string } | null = null;
  try {
    const f = decodeControlFrame(replayed, mac, { version });
    accepted = { msgKind: MSG_KIND_NAMES[f.msgKind] ?? String(f.msgKind), payloadHex: bytesToHex(f.payload) };
  } catch (e) {
    rejected = { code: isWireError(e) ? e.code : 'ERROR', message: (e as Error).message };
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
  name: 'control-replay',
  title: 'A captured control frame replayed as another kind',
  incident: 'WIRE.md 6.8',
  historicalBehaviour: 'lab-only historical behaviour: control protocol v1, MAC over the payload only',
  narrative:
    'A Shutdown ControlFrame is captured on a socket, its msg_kind rewritten to Heartbeat, and replayed. ' +
    'Historical (control protocol v1, MAC over the payload only): the tampered frame verifies and is accepted as a Heartbeat. ' +
    'flodl 0.7 (v2, MAC over kind || len || payload): HMAC_MISMATCH.',
  async historical() {
    const ev = await run(1);
    return { reproduced: ev.accepted?.msgKind === 'Heartbeat', evidence: ev };
  },
  async current() {
    const ev = await run(2);
    return { held: ev.accepted === null && ev.rejected?.code === 'HMAC_MISMATCH', evidence: ev };
  },
};
