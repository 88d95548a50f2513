// Streaming RoundFrame parser (WIRE.md 3.4, and the A4b streamed parse of
// 6.12): fed arbitrary chunks, it validates each field as soon as its bytes
// are in (count, kind and weight before the MAC; cumulative nbytes against the
// ceiling before a tensor's data), updates the footer MAC per chunk, and hands
// tensor bytes to the sink as they arrive, so a model-sized tensor is never
// buffered whole. onComplete fires only after the footer MAC verified.
// decodeRoundFrame is this parser fed one chunk, so both validate identically.
import {
  DEFAULT_FRAME_CEILING,
  MAX_ROUND_FRAME_TENSORS,
  ROUND_FRAME_FOOTER_LEN,
  ROUND_FRAME_HEADER_LEN,
  ROUND_FRAME_MAGIC,
  ROUND_KIND_CONTROL,
  ROUND_KIND_MODEL,
} from './constants';
import { WireError } from './errors';
import { tagsEqual, type Mac, type MacStream } from './mac';
import { numel } from './tensor';

export interface RoundFrameHeaderInfo {
  roundKind: number;
  weight: number;
  numTensors: number;
}

export interface RoundFrameTensorInfo {
  index: number;
  dtype: number;
  dims: number[];
  /** Declared byte count; 0 with numel > 0 = elided. */
  nbytes: number;
}

export interface RoundFrameSink {
  onHeader?(h: RoundFrameHeaderInfo): void;
  onTensor?(t: RoundFrameTensorInfo): void;
  /** `bytes` is a view into the pushed chunk: copy it if it must outlive the call. */
  onData?(index: number, offsetInTensor: number, bytes: Uint8Array): void;
  onComplete?(c: { tag: Uint8Array; wireLen: number }): void;
}

export interface RoundFrameStreamOptions {
  ceiling?: number;
  /** Exact frame length (the len-framed prefix): the parse must end exactly there. */
  totalLen?: number;
  sink?: RoundFrameSink;
  /**
   * With totalLen, bytes between the footer and the end of the blob.
   * 'reject' (default): TRAILING_BYTES ("consumed N bytes fewer than its
   * length prefix declared"), the rank-side streamed read. 'ignore': flodl's
   * relay and controller, which read the whole blob / HostFrame payload and
   * parse the RoundFrame off it, never looking past the footer (issue 16
   * item 6); the parser consumes them up to totalLen (`trailingBytes`), and
   * onComplete fires once the blob is complete.
   */
  trailing?: 'reject' | 'ignore';
}

type Phase = 'header' | 'meta' | 'dims' | 'data' | 'footer' | 'trailing' | 'done';

const hex32 = (v: number) => `0x${v.toString(16).padStart(8, '0')}`;

export class RoundFrameStreamParser {
  private phase: Phase = 'header';
  private readonly ceiling: number;
  private readonly totalLen: number | undefined;
  private readonly sink: RoundFrameSink;
  private readonly macStream: MacStream;
  /** Small fixed-size fields (header, tensor meta, dims+nbytes, footer) gather here. */
  private readonly scratch = new Uint8Array(4 * 255 + 8);
  private scratchLen = 0;
  private want = ROUND_FRAME_HEADER_LEN;
  private consumedTotal = 0;
  private numTensors = 0;
  private tensorIndex = 0;
  private dtype = 0;
  private ndim = 0;
  private cumulativeNbytes = 0;
  private dataLeft = 0;
  private dataOffset = 0;
  private headerChecked = 0;
  private readonly ignoreTrailing: boolean;
  private trailingLeft = 0;
  private trailingSeen = 0;
  private completion: { tag: Uint8Array; wireLen: number } | null = null;

  constructor(mac: Mac, opts: RoundFrameStreamOptions = {}) {
    this.ceiling = opts.ceiling ?? DEFAULT_FRAME_CEILING;
    this.totalLen = opts.totalLen;
    this.ignoreTrailing = opts.trailing === 'ignore';
    this.sink = opts.sink ?? {};
    this.macStream = mac.stream();
  }

  get done(): boolean {
    return this.phase === 'done';
  }

  /** Bytes consumed so far (the frame's wire length plus any ignored trailing bytes once done). */
  get consumed(): number {
    return this.consumedTotal;
  }

  /** Bytes after the footer consumed and ignored (trailing: 'ignore'). */
  get trailingBytes(): number {
    return this.trailingSeen;
  }

  /**
   * Consumes bytes of this frame from `chunk` and returns how many it took:
   * fewer than chunk.length only once the frame is complete (the rest belongs
   * to whatever follows). Throws WireError on the first violation.
   */
  push(chunk: Uint8Array): number {
    let pos = 0;
    // With a length prefix, never read past it: what follows is the next unit.
    const limit =
      this.totalLen === undefined ? chunk.length : Math.min(chunk.length, this.totalLen - this.consumedTotal);
    while (pos < limit && this.phase !== 'done') {
      if (this.phase === 'trailing') {
        const n = Math.min(this.trailingLeft, limit - pos);
        pos += n;
        this.consumedTotal += n;
        this.trailingSeen += n;
        this.trailingLeft -= n;
        if (this.trailingLeft === 0) this.completeNow();
        continue;
      }
      if (this.phase === 'data') {
        const n = Math.min(this.dataLeft, limit - pos);
        const part = chunk.subarray(pos, pos + n);
        this.macStream.update(part);
        this.sink.onData?.(this.tensorIndex, this.dataOffset, part);
        this.dataOffset += n;
        this.dataLeft -= n;
        pos += n;
        this.consumedTotal += n;
        if (this.dataLeft === 0) this.nextTensor();
        continue;
      }
      const n = Math.min(this.want - this.scratchLen, limit - pos);
      this.scratch.set(chunk.subarray(pos, pos + n), this.scratchLen);
      this.scratchLen += n;
      pos += n;
      this.consumedTotal += n;
      if (this.phase === 'header') this.checkHeaderPrefix();
      if (this.scratchLen === this.want) this.fieldComplete();
    }
    if (
      this.totalLen !== undefined &&
      this.phase !== 'done' &&
      this.consumedTotal >= this.totalLen &&
      chunk.length > 0
    ) {
      throw new WireError(
        'TRUNCATED',
        `stream ended inside a len-framed RoundFrame body: the frame extends past its ${this.totalLen}-byte length prefix`,
      );
    }
    return pos;
  }

  /** The input ended: anything but a complete frame is TRUNCATED. */
  end(): void {
    if (this.phase !== 'done') {
      throw new WireError(
        'TRUNCATED',
        this.totalLen !== undefined
          ? `stream ended inside a len-framed RoundFrame body after ${this.consumedTotal} of ${this.totalLen} bytes`
          : `RoundFrame truncated after ${this.consumedTotal} bytes (in ${this.phase})`,
      );
    }
  }

  /** Header checks as soon as their bytes are in: magic at 4, tensor count at 8, round kind at 9. */
  private checkHeaderPrefix(): void {
    const s = this.scratch;
    const dv = new DataView(s.buffer);
    if (this.headerChecked < 4 && this.scratchLen >= 4) {
      this.headerChecked = 4;
      const magic = dv.getUint32(0, true);
      if (magic !== ROUND_FRAME_MAGIC)
        throw new WireError(
          'BAD_MAGIC',
          `RoundFrame magic ${hex32(magic)} is not ${hex32(ROUND_FRAME_MAGIC)}`,
        );
    }
    if (this.headerChecked < 8 && this.scratchLen >= 8) {
      this.headerChecked = 8;
      const n = dv.getUint32(4, true);
      if (n > MAX_ROUND_FRAME_TENSORS)
        throw new WireError(
          'TOO_MANY_TENSORS',
          `RoundFrame declares ${n} tensors, more than ${MAX_ROUND_FRAME_TENSORS}`,
        );
    }
    if (this.headerChecked < 9 && this.scratchLen >= 9) {
      this.headerChecked = 9;
      const k = s[8];
      if (k !== ROUND_KIND_MODEL && k !== ROUND_KIND_CONTROL)
        throw new WireError(
          'BAD_ROUND_KIND',
          `RoundFrame round_kind ${k} is neither 0 (Model) nor 1 (Control)`,
        );
    }
  }

  private fieldComplete(): void {
    const s = this.scratch;
    const dv = new DataView(s.buffer);
    const field = s.subarray(0, this.scratchLen);
    switch (this.phase) {
      case 'header': {
        // Magic, count and kind were checked by checkHeaderPrefix as their bytes arrived.
        this.numTensors = dv.getUint32(4, true);
        const roundKind = s[8];
        const weight = dv.getFloat64(9, true);
        if (!Number.isFinite(weight) || !(weight >= 0))
          throw new WireError('BAD_WEIGHT', `RoundFrame weight ${weight} must be finite and >= 0`);
        this.macStream.update(field);
        this.sink.onHeader?.({ roundKind, weight, numTensors: this.numTensors });
        this.tensorIndex = -1;
        this.nextTensor();
        return;
      }
      case 'meta':
        this.macStream.update(field);
        this.dtype = s[0];
        this.ndim = s[1];
        this.expect('dims', 4 * this.ndim + 8);
        return;
      case 'dims': {
        this.macStream.update(field);
        const dims: number[] = [];
        for (let i = 0; i < this.ndim; i++) dims.push(dv.getUint32(4 * i, true));
        const nb = dv.getBigUint64(4 * this.ndim, true);
        const total = BigInt(this.cumulativeNbytes) + nb;
        if (total > BigInt(this.ceiling)) {
          throw new WireError(
            'OVER_CEILING',
            `RoundFrame tensor ${this.tensorIndex}: cumulative nbytes ${total} exceeds the frame ceiling ${this.ceiling}`,
          );
        }
        const nbytes = Number(nb);
        this.cumulativeNbytes = Number(total);
        if (
          this.totalLen !== undefined &&
          this.consumedTotal + nbytes + ROUND_FRAME_FOOTER_LEN > this.totalLen
        ) {
          throw new WireError(
            'TRUNCATED',
            `RoundFrame tensor ${this.tensorIndex} (${nbytes} bytes) extends past the ${this.totalLen}-byte length prefix`,
          );
        }
        this.sink.onTensor?.({ index: this.tensorIndex, dtype: this.dtype, dims, nbytes });
        if (nbytes === 0) {
          // Announce the (possibly elided) empty payload so sinks can record it.
          this.nextTensor();
          return;
        }
        this.phase = 'data';
        this.dataLeft = nbytes;
        this.dataOffset = 0;
        this.scratchLen = 0;
        return;
      }
      case 'footer': {
        const expected = this.macStream.finish();
        if (!tagsEqual(expected, field))
          throw new WireError('HMAC_MISMATCH', 'RoundFrame footer HMAC verification failed');
        this.phase = 'done';
        this.completion = { tag: Uint8Array.from(field), wireLen: this.consumedTotal };
        if (this.totalLen !== undefined && this.consumedTotal !== this.totalLen && this.ignoreTrailing) {
          this.phase = 'trailing';
          this.trailingLeft = this.totalLen - this.consumedTotal;
          return;
        }
        if (this.totalLen !== undefined && this.consumedTotal !== this.totalLen) {
          throw new WireError(
            'TRAILING_BYTES',
            `RoundFrame consumed ${this.totalLen - this.consumedTotal} bytes fewer than its length prefix declared`,
          );
        }
        this.completeNow();
        return;
      }
      default:
        return;
    }
  }

  private completeNow(): void {
    this.phase = 'done';
    this.sink.onComplete?.(this.completion!);
  }

  private nextTensor(): void {
    this.tensorIndex++;
    if (this.tensorIndex < this.numTensors) this.expect('meta', 2);
    else this.expect('footer', ROUND_FRAME_FOOTER_LEN);
  }

  private expect(phase: Phase, n: number): void {
    this.phase = phase;
    this.want = n;
    this.scratchLen = 0;
  }
}

/** True when numel > 0 and nbytes = 0 (zero-elision). */
export function isElidedShape(dims: number[], nbytes: number): boolean {
  return nbytes === 0 && numel(dims) > 0;
}
