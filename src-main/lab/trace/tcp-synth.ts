// Synthesizes one link's TCP conversation from the units the tap saw: a
// 3-way handshake before the first unit, each unit's bytes as MSS-sized
// segments with per-direction sequence and acknowledgement numbers that
// match the bytes, and a FIN or RST exchange when the link closes.
import {
  buildIpv4Tcp,
  MAX_TCP_PAYLOAD,
  parseIpv4,
  TCP_ACK,
  TCP_FIN,
  TCP_PSH,
  TCP_RST,
  TCP_SYN,
  type BuiltPacket,
} from './ipv4-tcp';
import type { TraceLink } from './format';
import { TraceError } from './errors';

export interface SynthPacket extends BuiltPacket {
  /** Microseconds after the unit's own timestamp (keeps packets of one unit in order). */
  offsetUs: number;
  /** True for the first segment of a unit (where the exporter puts its comment). */
  firstOfUnit: boolean;
  /** True for the SYN that opens a (new) connection. */
  opensConnection: boolean;
}

/** FNV-1a: deterministic initial sequence numbers, so the same trace exports the same bytes. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

function mssOption(mss: number): Uint8Array {
  return Uint8Array.of(2, 4, (mss >> 8) & 0xff, mss & 0xff);
}

interface Side {
  addr: Uint8Array;
  port: number;
  /** Next sequence number this side sends. */
  next: number;
  ipId: number;
}

export class TcpConversation {
  private readonly client: Side;
  private readonly server: Side;
  private open = false;
  private generation = 0;

  constructor(
    private readonly link: TraceLink,
    private readonly mss: number,
  ) {
    if (!Number.isInteger(mss) || mss < 1 || mss > MAX_TCP_PAYLOAD)
      throw new RangeError(`mss must be in [1, ${MAX_TCP_PAYLOAD}], got ${mss}`);
    for (const p of [link.clientPort, link.serverPort]) {
      if (!Number.isInteger(p) || p < 1 || p > 65535)
        throw new TraceError('BAD_LINK', `link ${link.id}: port ${p} is not in [1, 65535]`);
    }
    this.client = { addr: parseIpv4(link.clientAddr), port: link.clientPort, next: 0, ipId: 0 };
    this.server = { addr: parseIpv4(link.serverAddr), port: link.serverPort, next: 0, ipId: 0 };
  }

  private packet(
    from: Side,
    to: Side,
    flags: number,
    payload: Uint8Array,
    payloadLen: number,
    options?: Uint8Array,
  ): BuiltPacket {
    const built = buildIpv4Tcp({
      src: from.addr,
      dst: to.addr,
      srcPort: from.port,
      dstPort: to.port,
      seq: from.next,
      ack: flags & TCP_SYN && !(flags & TCP_ACK) ? 0 : to.next,
      flags,
      ipId: from.ipId,
      options,
      payload,
      payloadLen,
    });
    from.ipId = (from.ipId + 1) & 0xffff;
    return built;
  }

  private handshake(): BuiltPacket[] {
    this.generation += 1;
    const seed = fnv1a(`${this.link.id}#${this.generation}`);
    this.client.next = seed;
    this.server.next = fnv1a(`${seed}:server`);
    const opt = mssOption(this.mss);
    const syn = this.packet(this.client, this.server, TCP_SYN, new Uint8Array(0), 0, opt);
    this.client.next = (this.client.next + 1) >>> 0;
    const synAck = this.packet(this.server, this.client, TCP_SYN | TCP_ACK, new Uint8Array(0), 0, opt);
    this.server.next = (this.server.next + 1) >>> 0;
    const ack = this.packet(this.client, this.server, TCP_ACK, new Uint8Array(0), 0);
    this.open = true;
    return [syn, synAck, ack];
  }

  /**
   * One unit's packets. `captured` is a prefix of the unit's `length` bytes;
   * segments past it carry headers only, with the EPB's original length
   * telling the real size, as a capture with a snap length would.
   */
  unit(dir: 'up' | 'down', captured: Uint8Array, length: number): SynthPacket[] {
    const out: SynthPacket[] = [];
    if (!this.open) {
      // The handshake sits just before the first unit, a microsecond apart.
      const hs = this.handshake();
      hs.forEach((p, i) =>
        out.push({ ...p, offsetUs: i - hs.length, firstOfUnit: false, opensConnection: i === 0 }),
      );
    }
    const [from, to] = dir === 'up' ? [this.client, this.server] : [this.server, this.client];
    // Segments of one unit share the unit's timestamp (offset 0); file order keeps them in order.
    // A unit captured short puts its captured prefix in its first segment
    // only, kept at least one byte short of that segment: Wireshark then sees
    // a truncated segment and hands it to the dissector as is, instead of
    // waiting for a reassembly that can never complete (and then decoding a
    // later fragment as if a unit started there).
    const short = captured.length < length;
    const firstKeep = short ? Math.min(captured.length, Math.min(this.mss, length) - 1) : 0;
    for (let off = 0; off < length; off += this.mss) {
      const size = Math.min(this.mss, length - off);
      const last = off + size >= length;
      const payload = short
        ? captured.subarray(0, off === 0 ? firstKeep : 0)
        : captured.subarray(off, off + size);
      const p = this.packet(from, to, TCP_ACK | (last ? TCP_PSH : 0), payload, size);
      from.next = (from.next + size) >>> 0;
      out.push({ ...p, offsetUs: 0, firstOfUnit: off === 0, opensConnection: false });
    }
    return out;
  }

  get isOpen(): boolean {
    return this.open;
  }

  /** The connection ends: FIN handshake from `by`, or a RST. The next unit opens a new one. */
  close(by: 'client' | 'server', reset: boolean): BuiltPacket[] {
    if (!this.open) return [];
    this.open = false;
    const [a, b] = by === 'client' ? [this.client, this.server] : [this.server, this.client];
    if (reset) return [this.packet(a, b, TCP_RST | TCP_ACK, new Uint8Array(0), 0)];
    const fin1 = this.packet(a, b, TCP_FIN | TCP_ACK, new Uint8Array(0), 0);
    a.next = (a.next + 1) >>> 0;
    const fin2 = this.packet(b, a, TCP_FIN | TCP_ACK, new Uint8Array(0), 0);
    b.next = (b.next + 1) >>> 0;
    const last = this.packet(a, b, TCP_ACK, new Uint8Array(0), 0);
    return [fin1, fin2, last];
  }
}
