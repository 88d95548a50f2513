// What the relay's data channel does whatever it sends up (WIRE.md 4.4):
// the set of dead local ranks (EOF, read error, DeclareDead), the Broadcast
// fan-out to every rank not dead, Data{rank} down (legacy path), and one
// rank frame at a time handed to the role (fold or forward) unless its rank
// is dead. A rank that dies while its frame is still arriving contributes
// nothing: the role abandons the frame and the rest of its bytes are read and
// dropped, as a late frame from a dead rank is.
import { encodeLenPrefix } from '@shared/wire/len-frame';
import type { FrameSink } from '@shared/wire/reader-core';
import { unitBuffers } from './buffer-pool';
import { RelayChannel, type RankSock, type UpstreamRecord } from './relay-channel';
import type { RelayEvent, RelayOptions } from './relay-options';

/** One rank frame being received by a role. */
export interface FrameInProgress {
  chunk(bytes: Uint8Array): void;
  /** The frame is whole: verify and use it (throws when it cannot be used). */
  end(): void;
}

export abstract class DataUplink extends RelayChannel {
  protected readonly dead = new Set<number>();
  /** RoundFrames each rank has sent: one per round, so the count is the next frame's round. */
  private readonly framesUp = new Map<number, number>();
  /** Consensus frames passed down: one Broadcast per round, so the count is the next one's round. */
  private consensusDown = 0;

  constructor(opts: RelayOptions, emit: (e: RelayEvent) => void) {
    super(opts, emit, 'data');
  }

  /** A frame of `len` bytes from a live rank begins. */
  protected abstract beginFrame(rank: number, len: number): FrameInProgress;
  /** A local rank was just marked dead: drop what it had not committed; the round may now be complete. */
  protected abstract afterDeath(rank: number): void;

  protected frameSink(rs: RankSock): FrameSink {
    let frame: FrameInProgress | null = null;
    let cap: ReturnType<NonNullable<RelayOptions['tap']>['capture']> | null = null;
    let frameLen = 0;
    let frameRound = 0;
    return {
      onStart: (len) => {
        frameLen = len;
        frameRound = this.framesUp.get(rs.rank) ?? 0;
        this.framesUp.set(rs.rank, frameRound + 1);
        cap = this.opts.tap ? this.opts.tap.capture() : null;
        cap?.push(encodeLenPrefix(len, this.opts.ceiling));
        frame = this.dead.has(rs.rank) ? null : this.beginFrame(rs.rank, len);
      },
      onChunk: (b) => {
        cap?.push(b);
        // Declared dead mid-frame: the frame is abandoned (afterDeath dropped its staged part).
        if (frame && this.dead.has(rs.rank)) frame = null;
        frame?.chunk(b);
      },
      onEnd: () => {
        const f = frame;
        frame = null;
        if (!f || this.dead.has(rs.rank)) {
          const recordSeq = this.unitFor(
            rs,
            'up',
            'RoundFrame',
            frameLen + 4,
            cap,
            `RoundFrame from dead rank ${rs.rank}: dropped`,
            'ok',
            frameRound,
          );
          this.emit({
            type: 'dropped',
            rank: rs.rank,
            reason: 'late frame from a rank already marked dead',
            recordSeq,
          });
          return;
        }
        f.end();
        this.unitFor(
          rs,
          'up',
          'RoundFrame',
          frameLen + 4,
          cap,
          `RoundFrame from rank ${rs.rank} (${frameLen} B)`,
          'ok',
          frameRound,
        );
      },
    };
  }

  /** WIRE.md 4.4 mark_dead: out of the barrier; a deposit it already committed stays. */
  markDead(rank: number, cause: 'eof' | 'declared' | 'error'): void {
    if (this.dead.has(rank) || !this.ranks.has(rank)) return;
    this.dead.add(rank);
    this.emit({ type: 'rankDead', rank, cause });
    this.afterDeath(rank);
  }

  protected rankLeft(rank: number, cause: 'eof' | 'error'): void {
    this.markDead(rank, cause);
  }

  /** The upstream reader: the sole writer of every rank socket. */
  protected fromUpstream(rec: UpstreamRecord): void {
    if (rec.kind === 'Broadcast') return this.fanOut(rec.payload);
    if (rec.kind === 'Data') {
      this.sendToRank(rec.rank, rec.payload, 'Data');
      return;
    }
    if (rec.kind === 'Control' && rec.msg.type === 'DeclareDead') this.markDead(rec.msg.rank, 'declared');
    // Stray Hello/HelloAck/RankExit, HostFrame from upstream: dropped.
  }

  /**
   * The consensus, verbatim, to every local rank not dead (per-write failures ignored). Its
   * payload's buffer goes back to the pool it came from (if any) once every rank's writer is done
   * with it.
   */
  private fanOut(payload: Uint8Array): void {
    const prefix = encodeLenPrefix(payload.length, this.opts.ceiling);
    const round = this.consensusDown++;
    let writing = 1;
    const oneSent = () => --writing === 0 && unitBuffers.give(payload);
    for (const rs of this.ranks.values()) {
      if (this.dead.has(rs.rank)) continue;
      writing++;
      rs.conn.writer.enqueue([prefix, payload], oneSent);
      this.unitFor(
        rs,
        'down',
        'RoundFrame',
        payload.length + 4,
        [prefix, payload],
        `consensus to rank ${rs.rank} (${payload.length} B)`,
        'ok',
        round,
      );
    }
    oneSent();
  }
}
