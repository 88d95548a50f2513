// Trace -> pcapng: every link becomes a TCP connection between its real
// loopback addresses and ports, so Wireshark's TCP analysis and the
// relay_lab.lua dissector see the byte streams the sockets carried.
//
// Units captured short (captured < length) are written the way a capture
// with a snap length writes them: the captured prefix, with each EPB's
// original length and the IPv4 total length telling the real size. TCP
// sequence numbers advance by the real length, so every later unit still
// lines up; Wireshark marks those frames "[Packet size limited during
// capture]" and the dissector decodes what is there.
import { atomicWriteStream } from '../../files/atomic-write';
import { once } from 'node:events';
import { TraceError } from './errors';
import type { TraceEvent, TraceHeader, TraceLink } from './format';
import { readTraceFile, type TraceItem } from './ndjson';
import {
  enhancedPacketBlock,
  interfaceDescriptionBlock,
  LINKTYPE_IPV4,
  sectionHeaderBlock,
} from './pcapng-blocks';
import { MAX_TCP_PAYLOAD } from './ipv4-tcp';
import { TcpConversation } from './tcp-synth';

export interface PcapngOptions {
  /** TCP payload bytes per segment; defaults to loopback's 65495 (a full 64 KiB IPv4 packet). */
  mss?: number;
  /** Put a comment with the unit's seq, link, kind and summary on its first segment (default true). */
  comments?: boolean;
}

export interface ExportStats {
  units: number;
  packets: number;
  /** Units whose bytes were captured short (written with original lengths). */
  shortUnits: number;
  connections: number;
}

/** Largest packet this writer emits: the IDB's snap length. */
const SNAP_LEN = 0xffff;

export class PcapngExporter {
  private readonly links = new Map<string, TraceLink>();
  private readonly conversations = new Map<string, TcpConversation>();
  private readonly mss: number;
  private readonly comments: boolean;
  readonly stats: ExportStats = { units: 0, packets: 0, shortUnits: 0, connections: 0 };

  constructor(
    private readonly header: TraceHeader,
    private readonly sink: (chunk: Uint8Array) => void,
    opts: PcapngOptions = {},
  ) {
    this.mss = opts.mss ?? MAX_TCP_PAYLOAD;
    this.comments = opts.comments ?? true;
    for (const l of header.links) this.links.set(l.id, l);
    // The section names the control message index table: the dissector's user needs it to read 16, 17 and Heartbeat.
    sink(
      sectionHeaderBlock(
        `relay-lab (${header.producer ?? 'trace'}; control index table ${header.config.controlIndexTable ?? 'v2'})`,
      ),
    );
    sink(interfaceDescriptionBlock(LINKTYPE_IPV4, SNAP_LEN, 'relay-lab loopback'));
  }

  private conversation(linkId: string, line?: number): TcpConversation {
    let c = this.conversations.get(linkId);
    if (!c) {
      const link = this.links.get(linkId);
      if (!link)
        throw new TraceError(
          'UNKNOWN_LINK',
          `record on link '${linkId}', which the trace header does not list`,
          line,
        );
      c = new TcpConversation(link, this.mss);
      this.conversations.set(linkId, c);
    }
    return c;
  }

  private tsUs(t: number): number {
    return (this.header.startedAt + t) * 1000;
  }

  /** Feeds one trace event; only records and link closes produce packets. */
  event(ev: TraceEvent, line?: number): void {
    if (ev.type === 'record') {
      const r = ev.record;
      const conv = this.conversation(r.link, line);
      const packets = conv.unit(r.dir, ev.bytes, r.length);
      for (const p of packets) {
        if (p.opensConnection) this.stats.connections += 1;
        const comment = this.comments && p.firstOfUnit ? unitComment(ev) : undefined;
        this.sink(enhancedPacketBlock(0, this.tsUs(r.t) + p.offsetUs, p.data, p.origLen, comment));
        this.stats.packets += 1;
      }
      this.stats.units += 1;
      if (r.captured < r.length) this.stats.shortUnits += 1;
    } else if (ev.type === 'link') {
      // A link declared mid-trace; a redeclared id takes effect at its next connection.
      this.links.set(ev.link.id, ev.link);
      if (!this.conversations.get(ev.link.id)?.isOpen) this.conversations.delete(ev.link.id);
    } else if (ev.type === 'lifecycle' && ev.action === 'linkClosed' && ev.link) {
      const conv = this.conversations.get(ev.link);
      if (!conv) return;
      conv.close(ev.by ?? 'client', ev.reset ?? false).forEach((p, i) => {
        this.sink(enhancedPacketBlock(0, this.tsUs(ev.t) + i, p.data, p.origLen));
        this.stats.packets += 1;
      });
    }
  }
}

function unitComment(ev: TraceEvent & { type: 'record' }): string {
  const r = ev.record;
  let text = `relay-lab #${r.seq} ${r.link} ${r.dir} ${r.layer}/${r.kind}: ${r.summary}`;
  if (r.verdict !== 'ok') text += ` [${r.verdict}]`;
  if (r.captured < r.length) text += ` (captured ${r.captured} of ${r.length} bytes)`;
  return text;
}

/** Exports a streamed trace; the sink may return a promise to apply backpressure. */
export async function exportPcapng(
  items: AsyncIterable<TraceItem>,
  sink: (chunk: Uint8Array) => void | Promise<void>,
  opts?: PcapngOptions,
): Promise<ExportStats & { truncatedTail: boolean }> {
  let exporter: PcapngExporter | undefined;
  let pending: Uint8Array[] = [];
  const collect = (chunk: Uint8Array): void => void pending.push(chunk);
  let truncatedTail = false;
  for await (const item of items) {
    if (item.kind === 'header') exporter = new PcapngExporter(item.header, collect, opts);
    else if (!exporter) throw new TraceError('EMPTY', 'the trace has no header line');
    else if (item.kind === 'event') exporter.event(item.event, item.line);
    else truncatedTail = true;
    for (const chunk of pending) await sink(chunk);
    pending = [];
  }
  if (!exporter) throw new TraceError('EMPTY', 'the trace has no header line');
  return { ...exporter.stats, truncatedTail };
}

/** `relay-lab trace export` in one call: NDJSON trace file in, pcapng file out. */
export async function exportTraceFileToPcapng(
  tracePath: string,
  pcapngPath: string,
  opts?: PcapngOptions,
): Promise<ExportStats & { truncatedTail: boolean }> {
  const out = atomicWriteStream(pcapngPath);
  const failed = once(out, 'error').then(([e]) => Promise.reject(e as Error));
  failed.catch(() => {});
  try {
    const stats = await Promise.race([
      exportPcapng(
        readTraceFile(tracePath),
        async (chunk) => {
          if (!out.write(chunk)) await Promise.race([once(out, 'drain'), failed]);
        },
        opts,
      ),
      failed,
    ]);
    out.end();
    await Promise.race([once(out, 'finish'), failed]);
    return stats;
  } catch (e) {
    // The capture appears only whole: a failed export leaves no half file, and a file
    // already at pcapngPath stays as it was.
    out.destroy();
    throw e;
  }
}
