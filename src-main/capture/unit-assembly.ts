// One unit being collected from a byte stream. A unit up to `wholeLimit`
// bytes is kept whole and judged by the codec's dissector; a bigger one (a
// model-sized HostFrame, Broadcast or RoundFrame) is never held (dissecting
// builds a field per tensor element: 1.2-2.6 s for 4 MiB, all of it on the
// tap's event loop, against 3-4 ms per MiB streamed): its MAC is
// streamed and its RoundFrame fed to the codec's RoundFrameStreamParser, and
// only the first `snapLen` bytes are kept for the record.
import type { UnitLayer } from '@shared/lab/records';
import { MUX_HEADER_LEN, MUX_MAC_PREFIX_LEN, LEN_PREFIX_LEN } from '@shared/wire/constants';
import { isWireError, type WireErrorCode } from '@shared/wire/errors';
import { tagsEqual, type MacStream } from '@shared/wire/mac';
import { muxKindOfByte } from '@shared/wire/mux';
import { readU32LE } from '@shared/wire/bytes';
import { RoundFrameStreamParser } from '@shared/wire/round-frame-stream';
import { innerKindOf, judgeWholeUnit, type JudgeContext, type UnitFacts } from './unit-judge';

export class UnitAssembly {
  got = 0;
  private readonly parts: Uint8Array[] = [];
  private kept = 0;
  private readonly whole: boolean;
  /** Streamed checks of a big unit. */
  private head = new Uint8Array(0);
  private macStream: MacStream | null = null;
  private parser: RoundFrameStreamParser | null = null;
  private innerError: { code: WireErrorCode; message: string } | null = null;

  constructor(
    readonly layer: UnitLayer,
    readonly total: number,
    private readonly ctx: JudgeContext,
    private readonly snapLen: number,
    wholeLimit: number,
  ) {
    this.whole = total <= wholeLimit;
  }

  get remaining(): number {
    return this.total - this.got;
  }

  /** Adds at most `remaining` bytes of `chunk`; returns how many it took. */
  add(chunk: Uint8Array): number {
    const n = Math.min(chunk.length, this.remaining);
    const part = chunk.subarray(0, n);
    if (this.whole) this.parts.push(part);
    else {
      if (this.kept < this.snapLen) {
        const k = Math.min(n, this.snapLen - this.kept);
        this.parts.push(part.slice(0, k));
        this.kept += k;
      }
      this.stream(part);
    }
    this.got += n;
    return n;
  }

  /** The kept bytes: the whole unit, or its first snapLen bytes. */
  bytes(): Uint8Array {
    const all = this.parts.length === 1 ? this.parts[0] : Buffer.concat(this.parts);
    return all.length > this.snapLen ? all.subarray(0, this.snapLen) : all;
  }

  /** Judges the complete unit. */
  finish(): UnitFacts {
    if (this.whole) {
      const all = this.parts.length === 1 ? this.parts[0] : Buffer.concat(this.parts);
      return judgeWholeUnit(this.layer, all, this.ctx);
    }
    return this.finishStreamed();
  }

  /** Feeds the streamed checks of a big unit (header bytes gathered first). */
  private stream(part: Uint8Array): void {
    const headLen = this.layer === 'mux' ? MUX_HEADER_LEN : LEN_PREFIX_LEN;
    if (this.head.length < headLen) {
      const take = Math.min(headLen - this.head.length, part.length);
      this.head = Buffer.concat([this.head, part.subarray(0, take)]);
      part = part.subarray(take);
      if (this.head.length < headLen) return;
      if (this.layer === 'mux') {
        this.macStream = this.ctx.mac.stream();
        this.macStream.update(this.head.subarray(0, MUX_MAC_PREFIX_LEN));
      }
    }
    if (part.length === 0) return;
    this.macStream?.update(part);
    if (this.innerError) return;
    if (!this.parser) {
      if (innerKindOf(part) !== 'RoundFrame') {
        this.innerError = { code: 'BAD_MAGIC', message: 'a model-sized payload that is not a RoundFrame' };
        return;
      }
      this.parser = new RoundFrameStreamParser(this.ctx.mac, {
        ceiling: this.ctx.ceiling,
        totalLen: this.total - headLen,
      });
    }
    try {
      this.parser.push(part);
    } catch (e) {
      this.innerError = {
        code: isWireError(e) ? e.code : 'BAD_PAYLOAD',
        message: (e as Error).message,
      };
    }
  }

  private finishStreamed(): UnitFacts {
    const payloadLen = this.total - (this.layer === 'mux' ? MUX_HEADER_LEN : LEN_PREFIX_LEN);
    if (!this.innerError && this.parser) {
      try {
        this.parser.end();
      } catch (e) {
        this.innerError = { code: isWireError(e) ? e.code : 'BAD_PAYLOAD', message: (e as Error).message };
      }
    }
    if (this.layer === 'mux') {
      const kind = muxKindOfByte(this.head[8]) ?? `kind 0x${this.head[8].toString(16)}`;
      // As judgeWholeUnit names it: which path judged a unit is not the person's concern.
      const rank = kind === 'Data' ? readU32LE(this.head, 9) : undefined;
      const summary = `${kind}${rank !== undefined ? ` r=${rank}` : ''} RoundFrame ${payloadLen} B`;
      if (!tagsEqual(this.macStream!.finish(), this.head.subarray(MUX_MAC_PREFIX_LEN, MUX_HEADER_LEN)))
        return {
          kind,
          rank,
          verdict: 'HMAC_MISMATCH',
          message: 'mux record HMAC verification failed',
          summary,
        };
      if (!muxKindOfByte(this.head[8]))
        return {
          kind,
          rank,
          verdict: 'UNKNOWN_KIND',
          message: `unknown mux record kind 0x${this.head[8].toString(16)}`,
          summary,
        };
      if (this.innerError)
        return {
          kind,
          rank,
          verdict: this.innerError.code,
          message: `RoundFrame: ${this.innerError.message}`,
          summary,
        };
      return { kind, rank, verdict: 'ok', summary };
    }
    const summary = `RoundFrame ${payloadLen} B`;
    if (this.innerError)
      return { kind: 'RoundFrame', verdict: this.innerError.code, message: this.innerError.message, summary };
    return { kind: 'RoundFrame', verdict: 'ok', summary };
  }
}
