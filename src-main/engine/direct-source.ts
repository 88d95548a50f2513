// Lab-only direct mode at the controller: one rank's own data connection
// after its handshake, carrying len-framed RoundFrames (the topology before
// relays). A frame counts once whole and verified, unless its rank is dead.
import { encodeLenPrefix } from '@shared/wire/len-frame';
import { LenFrameReader } from '@shared/wire/len-frame-reader';
import { isWireError, type WireError } from '@shared/wire/errors';
import type { Conn } from './conn';
import type { ContributionSource, SourceOwner } from './controller-options';
import { FrameCollector, type CollectedFrame } from './frame-collector';
import type { Tap } from './tap';
import type { UplinkRecorder } from './uplink-recorder';

export class DirectSource implements ContributionSource {
  readonly direct = true;
  readonly frames = new Map<number, CollectedFrame>();
  readonly ranks: readonly number[];
  open = true;
  private readonly reader: LenFrameReader;
  private failed = false;

  constructor(
    readonly conn: Conn,
    readonly recorder: UplinkRecorder,
    readonly rank: number,
    readonly host: number,
    private readonly owner: SourceOwner,
  ) {
    this.ranks = [rank];
    const { mac, ceiling, tap } = owner.opts;
    let collector: FrameCollector | null = null;
    let capture: ReturnType<Tap['capture']> | null = null;
    let len = 0;
    this.reader = new LenFrameReader({
      ceiling,
      now: () => performance.now(),
      sink: {
        onStart: (n) => {
          len = n;
          capture = tap?.capture() ?? null;
          capture?.push(encodeLenPrefix(n, ceiling));
          collector = new FrameCollector(mac, ceiling, n);
        },
        onChunk: (b) => {
          capture?.push(b);
          collector!.push(b);
        },
        onEnd: () => this.frameEnded(collector!.end(), len, capture),
      },
    });
  }

  get hostName(): string {
    return `r${this.rank}`;
  }

  /** Starts reading; `rest` = bytes that followed the handshake. */
  start(rest: Uint8Array): void {
    this.conn.setConsumer((chunk) => this.push(chunk));
    if (rest.length > 0) this.conn.unshift(rest);
  }

  private push(chunk: Uint8Array): void {
    if (this.failed) return;
    try {
      this.reader.push(chunk);
    } catch (e) {
      this.failed = true;
      const code = isWireError(e) ? e.code : 'BAD_PAYLOAD';
      const seq = this.recorder.record({
        dir: 'up',
        layer: 'lenframe',
        kind: 'rejected',
        rank: this.rank,
        length: 0,
        verdict: code as never,
        summary: (e as Error).message,
      });
      this.owner.sourceFailed(this, (e as Error).message, code, seq);
    }
  }

  private frameEnded(frame: CollectedFrame, len: number, capture: ReturnType<Tap['capture']> | null): void {
    this.recorder.record({
      dir: 'up',
      layer: 'lenframe',
      kind: 'RoundFrame',
      rank: this.rank,
      round: this.owner.round,
      length: len + 4,
      summary: `RoundFrame from rank ${this.rank} (direct, lab-only) w=${frame.weight}`,
      bytes: capture ?? undefined,
    });
    if (!this.owner.opts.dead.isDead(this.rank)) this.frames.set(this.rank, frame);
    this.owner.contributed();
  }

  checkStarvation(now: number, deadlineMs: number): WireError | null {
    return this.failed ? null : this.reader.checkStarvation(now, deadlineMs);
  }
}
