// A relay channel's accept loop (WIRE.md 4.2 step 2): accept loopback
// connections until every local rank has connected, terminating each rank's
// handshake (WIRE.md 3.6). An unknown or duplicate rank, or any other
// handshake failure, fails the whole channel start.
import type { Duplex } from 'node:stream';
import { Conn } from './conn';
import { acceptRankHandshake } from './rank-handshake';
import type { ChannelName, RankAcceptor, RelayOptions } from './relay-options';
import type { TapLink } from './tap';

export interface AcceptContext {
  opts: RelayOptions;
  channel: ChannelName;
  /** The rank's loopback link on the tap, with the connection's bytes bound to it. */
  bindLink: (rank: number, conn: Conn) => TapLink | undefined;
  onError: (e: Error) => void;
}

export interface AcceptedRank {
  rank: number;
  conn: Conn;
  /** Bytes that followed the handshake. */
  rest: Uint8Array;
}

/** Accepts every local rank; any handshake failure fails the whole channel start (WIRE.md 3.6). */
export function acceptLocalRanks(server: RankAcceptor, ctx: AcceptContext): Promise<AcceptedRank[]> {
  const expected = [...ctx.opts.ranks].sort((a, b) => a - b);
  const pending = new Set<number>(expected);
  const accepted: AcceptedRank[] = [];
  return new Promise<AcceptedRank[]>((resolve, reject) => {
    const onConn = (socket: Duplex) => {
      const conn = new Conn(socket, { readDir: 'up', noDelay: !ctx.opts.historical?.nagle });
      acceptRankHandshake(conn, {
        channel: ctx.channel,
        mac: ctx.opts.mac,
        version: ctx.channel === 'data' ? ctx.opts.dataVersion : ctx.opts.controlVersion,
        worldSize: ctx.opts.worldSize,
        check: (rank) =>
          !expected.includes(rank)
            ? `rank ${rank} is not one of host ${ctx.opts.hostName}'s ranks [${expected}]`
            : !pending.has(rank)
              ? `rank ${rank} connected twice`
              : null,
        onUnit: (dir, bytes, verdict, summary, rank) => {
          const link = ctx.bindLink(rank, conn);
          if (link)
            ctx.opts.tap!.unit({
              link,
              dir,
              layer: 'handshake',
              kind: dir === 'up' ? `${ctx.channel}Handshake` : `${ctx.channel}HandshakeAck`,
              length: bytes.length,
              verdict: verdict as never,
              summary,
              bytes: [bytes],
            });
        },
      }).then(
        ({ rank, rest }) => {
          pending.delete(rank);
          accepted.push({ rank, conn, rest });
          if (pending.size === 0) {
            server.off('connection', onConn);
            resolve(accepted);
          }
        },
        (e: Error) => {
          conn.destroy();
          ctx.onError(e);
          server.off('connection', onConn);
          reject(e);
        },
      );
    };
    server.on('connection', onConn);
  });
}
