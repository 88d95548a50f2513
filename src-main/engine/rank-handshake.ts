// The serving side of a rank's handshake (WIRE.md 3.6), used by the relay's
// loopback listeners and, in the lab-only direct mode, by the controller and
// coordinator: read the fixed-size hello, check magic, version, world size
// and that the rank is expected, then answer the ack.
import { CONTROL_HANDSHAKE_LEN, DATA_HANDSHAKE_LEN } from '@shared/wire/constants';
import {
  decodeControlHandshake,
  decodeDataHandshake,
  encodeControlAck,
  encodeDataAck,
} from '@shared/wire/handshake';
import type { Mac } from '@shared/wire/mac';
import { WireError, isWireError } from '@shared/wire/errors';
import type { Conn } from './conn';
import { FixedReader } from '@shared/wire/fixed-reader';

export interface RankHandshakeOptions {
  channel: 'data' | 'control';
  mac: Mac;
  version: number;
  worldSize: number;
  /** Returns an error message when this rank may not connect here (unknown, duplicate). */
  check: (rank: number) => string | null;
  /** The hello as read and the ack as sent, for the tap. */
  onUnit?: (
    dir: 'up' | 'down',
    bytes: Uint8Array,
    verdict: 'ok' | string,
    summary: string,
    rank: number,
  ) => void;
}

export class HandshakeRejected extends Error {
  override readonly name = 'HandshakeRejected';
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

/** Resolves with the rank once the ack is queued; rest = bytes that followed the hello. */
export function acceptRankHandshake(
  conn: Conn,
  opts: RankHandshakeOptions,
): Promise<{ rank: number; rest: Uint8Array }> {
  const len = opts.channel === 'data' ? DATA_HANDSHAKE_LEN : CONTROL_HANDSHAKE_LEN;
  const fixed = new FixedReader(len);
  return new Promise((resolve, reject) => {
    conn.onClose(() =>
      reject(
        new HandshakeRejected(`rank closed the ${opts.channel} connection before its handshake`, 'TRUNCATED'),
      ),
    );
    conn.setConsumer((chunk) => {
      const { unit: hello, rest } = fixed.push(chunk);
      if (!hello) return;
      conn.setConsumer(null);
      // The rank field (bytes 8..12) names the link even when the hello is rejected.
      const claimed = new DataView(hello.buffer, hello.byteOffset).getUint32(8, true);
      try {
        const h =
          opts.channel === 'data'
            ? decodeDataHandshake(hello, { version: opts.version })
            : decodeControlHandshake(hello, opts.mac, { version: opts.version });
        if (h.worldSize !== opts.worldSize) {
          throw new HandshakeRejected(
            `rank ${h.rank} announced world_size ${h.worldSize}, expected ${opts.worldSize}`,
            'BAD_PAYLOAD',
          );
        }
        const problem = opts.check(h.rank);
        if (problem) throw new HandshakeRejected(problem, 'BAD_PAYLOAD');
        opts.onUnit?.(
          'up',
          hello,
          'ok',
          `${opts.channel} handshake rank=${h.rank} world=${h.worldSize} v${h.version}`,
          claimed,
        );
        const ack =
          opts.channel === 'data' ? encodeDataAck(opts.version) : encodeControlAck(opts.version, opts.mac);
        conn.send(ack);
        opts.onUnit?.('down', ack, 'ok', `${opts.channel} handshake ack v${opts.version}`, claimed);
        resolve({ rank: h.rank, rest });
      } catch (e) {
        const code = isWireError(e) ? e.code : e instanceof HandshakeRejected ? e.code : 'BAD_PAYLOAD';
        opts.onUnit?.(
          'up',
          hello,
          code,
          `${opts.channel} handshake rejected: ${(e as Error).message}`,
          claimed,
        );
        reject(
          e instanceof WireError || e instanceof HandshakeRejected
            ? e
            : new HandshakeRejected((e as Error).message, code),
        );
      }
    });
  });
}
