// A classic pcap stream read as it arrives (tcpdump -w - on a pipe): the
// 24-byte file header once, then each record whole, however the pipe cut the
// bytes. The whole-file reader (capture-file.ts) keeps what is whole of a
// finished file; this one keeps the tail of a record until the rest comes.
import { TraceError } from '../lab/trace/errors';
import type { RawPacket } from './capture-file';

/** A record longer than this is not from a capture this tap started (its snap length is 256 KiB). */
export const MAX_RECORD_BYTES = 16 * 1024 * 1024;

export class PcapStreamReader {
  private pending: Uint8Array = new Uint8Array(0);
  private header: { le: boolean; nano: boolean; linkType: number } | null = null;

  /** The records completed by `chunk` (their bytes are copies: the chunk may be reused after). */
  push(chunk: Uint8Array): RawPacket[] {
    let buf = chunk;
    if (this.pending.length > 0) {
      buf = new Uint8Array(this.pending.length + chunk.length);
      buf.set(this.pending);
      buf.set(chunk, this.pending.length);
    }
    const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    let at = 0;
    if (!this.header) {
      if (buf.length < 24) {
        this.pending = buf.slice();
        return [];
      }
      this.header = headerOf(dv);
      at = 24;
    }
    const { le, nano, linkType } = this.header;
    const out: RawPacket[] = [];
    while (at + 16 <= buf.length) {
      const capLen = dv.getUint32(at + 8, le);
      if (capLen > MAX_RECORD_BYTES)
        throw new TraceError('BAD_PCAPNG', `a pcap record of ${capLen} bytes (at most ${MAX_RECORD_BYTES})`);
      if (at + 16 + capLen > buf.length) break;
      const sec = dv.getUint32(at, le);
      const frac = dv.getUint32(at + 4, le);
      out.push({
        time: sec * 1000 + (nano ? frac / 1e6 : frac / 1e3),
        linkType,
        data: buf.slice(at + 16, at + 16 + capLen),
      });
      at += 16 + capLen;
    }
    this.pending = buf.slice(at);
    return out;
  }
}

function headerOf(dv: DataView): { le: boolean; nano: boolean; linkType: number } {
  const magic = dv.getUint32(0, true);
  let le: boolean;
  if (magic === 0xa1b2c3d4 || magic === 0xa1b23c4d) le = true;
  else if (magic === 0xd4c3b2a1 || magic === 0x4d3cb2a1) le = false;
  else throw new TraceError('BAD_PCAPNG', `not a pcap stream (magic 0x${magic.toString(16)})`);
  return { le, nano: dv.getUint32(0, le) === 0xa1b23c4d, linkType: dv.getUint32(20, le) & 0x0fffffff };
}
