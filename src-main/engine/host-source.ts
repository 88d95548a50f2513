// One relay's data connection at the controller after its Hello (WIRE.md 4.5,
// per-connection reader): owns the connection's record stream from then on.
// A HostFrame is parsed and MAC-checked as it streams but stored as this
// host's contribution only once whole and verified (mux tag, then the inner
// RoundFrame footer); a host whose ranks are all dead when its frame ends
// contributes nothing. RankExit goes to the controller's policy; per-rank
// Data on the data channel is a named error (a stale relay build); a
// Broadcast from a relay is dropped. Every record after Hello is tagged with
// the round the controller is reducing when it ends, so each byte of the
// uplink belongs to exactly one round (src-shared/lab/round-bytes.ts).
import { MUX_HEADER_LEN, REC_BROADCAST, REC_DATA, REC_HOST_FRAME } from '@shared/wire/constants';
import { isWireError, WireError } from '@shared/wire/errors';
import { muxKindOfByte, type MuxHeader } from '@shared/wire/mux';
import type { UnitCorruption } from '@shared/lab/records';
import { decodeRelayControl } from '@shared/wire/relay-control';
import type { Conn, InboundCorruption } from './conn';
import type { ContributionSource, SourceOwner } from './controller-options';
import { FrameCollector, type CollectedFrame } from './frame-collector';
import type { MuxRecordHandler, MuxRecordStream, PayloadSink } from './mux-stream';
import type { Tap } from './tap';
import type { UplinkRecorder } from './uplink-recorder';

/** The largest unit kept whole because a lab fault may corrupt it. */
const MAX_WHOLE_CAPTURE = 64 * 1024 * 1024;

export class HostSource implements ContributionSource, MuxRecordHandler {
  readonly direct = false;
  readonly frames = new Map<number, CollectedFrame>();
  open = true;
  /** The record being read: its captured bytes and, for a HostFrame, its collector. */
  private capture: ReturnType<Tap['capture']> | null = null;
  private collector: FrameCollector | null = null;
  /** An inner parse error waits until the record's own MAC was judged (WIRE.md 3.2 step 6). */
  private innerError: Error | null = null;
  /** The header of the record being read (null between records). */
  private reading: MuxHeader | null = null;

  constructor(
    readonly conn: Conn,
    readonly recorder: UplinkRecorder,
    readonly hostName: string,
    readonly host: number,
    readonly ranks: readonly number[],
    private readonly stream: MuxRecordStream,
    private readonly owner: SourceOwner,
  ) {
    stream.handTo(this);
  }

  private allDead(): boolean {
    return this.ranks.every((r) => this.owner.opts.dead.isDead(r));
  }

  checkStarvation(now: number, deadlineMs: number): WireError | null {
    return this.stream.checkStarvation(now, deadlineMs);
  }

  begin(h: MuxHeader, headerBytes: Uint8Array): PayloadSink | null {
    this.reading = h;
    // A unit the lab's "corrupt next" fault may hit is kept whole (up to 64 MiB), so the flipped
    // byte can be shown wherever it lands; every other unit keeps the snap length.
    const hit = this.conn.corruptArmed || this.conn.corruptions.some((c) => c.at >= this.stream.recordStart);
    const whole = hit ? Math.min(MUX_HEADER_LEN + h.payloadLen, MAX_WHOLE_CAPTURE) : 0;
    this.capture = this.owner.opts.tap?.capture(whole) ?? null;
    this.capture?.push(headerBytes);
    this.collector = null;
    this.innerError = null;
    if (h.kind !== REC_HOST_FRAME) return null;
    // A connection whose ranks are all dead: its frame is read and dropped unparsed.
    if (!this.allDead())
      this.collector = new FrameCollector(this.owner.opts.mac, this.owner.opts.ceiling, h.payloadLen);
    return {
      chunk: (b) => {
        this.capture?.push(b);
        if (!this.collector) return;
        try {
          this.collector.push(b);
        } catch (e) {
          this.innerError = e as Error;
          this.collector = null;
        }
      },
    };
  }

  end(h: MuxHeader, headerBytes: Uint8Array, payload: Uint8Array | null): void {
    this.reading = null;
    if (payload) this.capture?.push(payload);
    const length = headerBytes.length + h.payloadLen;
    const bytes = this.capture ?? undefined;
    if (h.kind === REC_HOST_FRAME) return this.hostFrame(h, length, bytes);
    if (h.kind === REC_DATA) {
      this.recorder.record({
        dir: 'up',
        layer: 'mux',
        kind: 'Data',
        round: this.owner.round,
        rank: h.rank,
        length,
        verdict: 'BAD_PAYLOAD',
        summary: 'per-rank Data on the data channel',
        bytes,
      });
      throw new WireError(
        'BAD_PAYLOAD',
        `per-rank Data record for rank ${h.rank} on the data channel: the relay is expected to fold into a HostFrame (mixed relay/controller builds?)`,
      );
    }
    if (h.kind === REC_BROADCAST) {
      this.recorder.record({
        dir: 'up',
        layer: 'mux',
        kind: 'Broadcast',
        round: this.owner.round,
        length,
        summary: 'Broadcast from a relay: dropped',
        bytes,
      });
      return;
    }
    const msg = decodeRelayControl(payload!);
    if (msg.type === 'RankExit') {
      this.recorder.record({
        dir: 'up',
        layer: 'mux',
        kind: 'RankExit',
        rank: msg.rank,
        round: this.owner.round,
        length,
        summary: `RankExit rank=${msg.rank}`,
        bytes,
      });
      this.owner.rankExited(this, msg.rank);
      return;
    }
    this.recorder.record({
      dir: 'up',
      layer: 'mux',
      kind: msg.type,
      round: this.owner.round,
      length,
      summary: 'unexpected record: dropped',
      bytes,
    });
  }

  private hostFrame(h: MuxHeader, length: number, bytes: ReturnType<Tap['capture']> | undefined): void {
    if (this.innerError) throw this.innerError;
    const collector = this.collector;
    this.collector = null;
    // Death decides at the end: a host all of whose ranks died meanwhile contributes nothing.
    if (!collector || this.allDead()) {
      this.recorder.record({
        dir: 'up',
        layer: 'mux',
        kind: 'HostFrame',
        round: this.owner.round,
        length,
        summary: `HostFrame from ${this.hostName}: every rank dead, dropped`,
        bytes,
      });
      return;
    }
    const frame = collector.end();
    const forward = this.owner.opts.mode === 'forward';
    const key = forward ? h.rank : -1;
    if (forward && !this.ranks.includes(key))
      throw new WireError(
        'BAD_PAYLOAD',
        `forwarded frame for rank ${key}, not one of ${this.hostName}'s ranks`,
      );
    this.recorder.record({
      dir: 'up',
      layer: 'mux',
      kind: 'HostFrame',
      rank: forward ? key : undefined,
      round: this.owner.round,
      length,
      summary: `HostFrame${forward ? ` r=${key} (forward, lab-only)` : ''} ${frame.tensors.length} tensors w=${frame.weight}`,
      bytes,
    });
    // A second frame before the round is taken overwrites the slot (WIRE.md 4.5).
    this.frames.set(key, frame);
    this.owner.contributed();
  }

  fail(e: Error): void {
    const code = isWireError(e) ? e.code : 'BAD_PAYLOAD';
    const flodlError = isWireError(e) ? e.flodlMessage : undefined;
    const h = this.reading;
    this.reading = null;
    // A record whose header was read is kept with the bytes as received (and, when the lab's
    // fault flipped one of them, which byte and what was sent), so the rejection can be inspected.
    const seq = h
      ? this.recorder.record({
          dir: 'up',
          layer: 'mux',
          kind: muxKindOfByte(h.kind) ?? 'rejected',
          rank: h.kind === REC_HOST_FRAME ? undefined : h.rank,
          round: this.owner.round,
          length: MUX_HEADER_LEN + h.payloadLen,
          verdict: code as never,
          summary: `rejected: ${e.message}`,
          bytes: this.capture ?? undefined,
          flodlError,
          corruption: corruptionIn(
            this.conn.corruptions,
            this.stream.recordStart,
            MUX_HEADER_LEN + h.payloadLen,
          ),
        })
      : this.recorder.record({
          dir: 'up',
          layer: 'mux',
          kind: 'rejected',
          length: 0,
          verdict: code as never,
          summary: e.message,
          flodlError,
        });
    this.owner.sourceFailed(this, e.message, code, seq);
  }
}

/** The lab's flipped byte that falls in the unit at stream offset `start`, in the unit's own offsets. */
export function corruptionIn(
  flips: readonly InboundCorruption[],
  start: number,
  length: number,
): UnitCorruption | undefined {
  const c = flips.findLast((f) => f.at >= start && f.at < start + length);
  if (!c) return undefined;
  const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
  return {
    offset: c.at - start,
    sent: c.sent,
    received: c.received,
    windowOffset: Math.max(0, c.windowAt - start),
    // The window may start before the unit (in the previous one): keep the unit's part.
    sentHex: hex(c.windowSent.subarray(Math.max(0, start - c.windowAt))),
    receivedHex: hex(c.windowReceived.subarray(Math.max(0, start - c.windowAt))),
  };
}
