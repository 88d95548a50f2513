// The relay's control channel (WIRE.md 4.3): a pure byte router. A rank's
// len-framed ControlFrame goes up unparsed as Data{rank}; Data{rank} from the
// coordinator goes down to that rank; a rank leaving sends RankExit (queued
// by the base). Broadcast, DeclareDead and stray Hello/HelloAck/HostFrame
// records are dropped on this channel.
import { encodeLenPrefix } from '@shared/wire/len-frame';
import { encodeMuxRecord } from '@shared/wire/mux';
import { ChunkAccumulator, type FrameSink } from '@shared/wire/reader-core';
import { RelayChannel, type RankSock, type UpstreamRecord } from './relay-channel';
import type { RelayEvent, RelayOptions } from './relay-options';

export class ControlRouter extends RelayChannel {
  constructor(opts: RelayOptions, emit: (e: RelayEvent) => void) {
    super(opts, emit, 'control');
  }

  protected frameSink(rs: RankSock): FrameSink {
    const blob = new ChunkAccumulator();
    return {
      onStart: () => blob.clear(),
      onChunk: (b) => blob.append(b),
      onEnd: () => this.up(rs, blob.take()),
    };
  }

  private up(rs: RankSock, blob: Uint8Array): void {
    if (rs.link) {
      this.opts.tap!.unit({
        link: rs.link,
        dir: 'up',
        layer: 'lenframe',
        kind: 'ControlFrame',
        rank: rs.rank,
        length: blob.length + 4,
        summary: `ControlFrame from rank ${rs.rank} (${blob.length} B)`,
        bytes: [encodeLenPrefix(blob.length, this.opts.ceiling), blob],
      });
    }
    this.sendUp([encodeMuxRecord({ kind: 'Data', rank: rs.rank, payload: blob }, this.opts.mac)]);
  }

  protected fromUpstream(rec: UpstreamRecord): void {
    if (rec.kind !== 'Data') return; // Broadcast ("desynced controller?"), Control, HostFrame: dropped
    this.sendToRank(rec.rank, rec.payload, 'ControlFrame');
  }

  protected rankLeft(): void {
    // Nothing besides the RankExit: the control channel has no barrier.
  }
}
