// The relay's data channel in the lab-only `forward` mode: each rank frame is
// verified as it streams (MAC per chunk, footer at the end) and sent up
// verbatim as its own HostFrame record whose rank field carries the source
// rank (flodl always writes 0 there); the controller folds per rank. With
// `asData` it is instead the pre-fold relay build of WIRE.md 6.11 (lab-only,
// historical): per-rank Data records on the data channel.
import { REC_HOST_FRAME } from '@shared/wire/constants';
import { encodeMuxRecord } from '@shared/wire/mux';
import { ChunkAccumulator } from '@shared/wire/reader-core';
import { RoundFrameStreamParser } from '@shared/wire/round-frame-stream';
import { DataUplink, type FrameInProgress } from './data-uplink';
import type { RelayEvent, RelayOptions } from './relay-options';
import { muxHeaderSliced } from './sliced';

export class ForwardUplink extends DataUplink {
  /** Frames sent up per rank: the round of each rank's next frame (ranks send one frame per round). */
  private readonly framesOf = new Map<number, number>();

  constructor(
    opts: RelayOptions,
    emit: (e: RelayEvent) => void,
    private readonly asData: boolean,
  ) {
    super(opts, emit);
  }

  protected beginFrame(rank: number, len: number): FrameInProgress {
    const body = new ChunkAccumulator();
    const parser = new RoundFrameStreamParser(this.opts.mac, {
      ceiling: this.opts.ceiling,
      totalLen: len,
      trailing: 'ignore',
    });
    return {
      chunk: (b) => {
        body.append(b);
        parser.push(b);
      },
      end: () => {
        parser.end();
        this.up(rank, body.take());
      },
    };
  }

  private up(rank: number, payload: Uint8Array): void {
    if (this.asData) {
      this.sendUp([encodeMuxRecord({ kind: 'Data', rank, payload }, this.opts.mac)]);
      return;
    }
    const round = this.framesOf.get(rank) ?? 0;
    this.framesOf.set(rank, round + 1);
    this.sendUpLater(async () => {
      this.emit({ type: 'forwarded', round, rank, bytes: payload.length });
      return [await muxHeaderSliced(REC_HOST_FRAME, rank, [payload], this.opts.mac), payload];
    });
  }

  protected afterDeath(): void {
    // No barrier: each frame went up on its own.
  }
}
