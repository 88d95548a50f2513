// On the engine's side of a host agent's link: the remote host's loopback legs
// as its agent sends them (leg-forwarder.ts), recorded in the job's tap under
// the names a local host's legs get (engine/loopback-link.ts), so the
// trace, the window, the savings (rankDataUpBytes) and the findings treat them
// as h0's. A unit keeps the relay's verdict; its time is moved onto the engine
// tap's clock. Units the agent did not send are one named `gap` record per
// link and direction ("not kept: the agent link fell behind", verdict ok: no
// byte failed on the wire) and a warning. The agent is authenticated, but a
// unit that does not read right is dropped and counted, never recorded.
import { hostName } from '@shared/lab/topology';
import type { UnitLayer, UnitRecord } from '@shared/lab/records';
import { WIRE_ERROR_CODES } from '@shared/wire/errors';
import { loopbackLinkInfo } from '../engine/loopback-link';
import type { Tap, TapLink } from '../engine/tap';
import type { AgentToEngine, LegGap, LegUnit } from './agent-protocol';

type LegMessage = Extract<AgentToEngine, { type: 'legLink' | 'legUnits' | 'legGap' | 'legBytes' }>;

const LAYERS: ReadonlySet<string> = new Set<UnitLayer>(['channelMagic', 'handshake', 'lenframe', 'mux']);
const VERDICTS: ReadonlySet<string> = new Set(['ok', ...WIRE_ERROR_CODES]);
/** Agent tap seqs remembered for relay events that point at a unit (a finding's record). */
const SEQS_KEPT = 4096;
/** The clock offset is the least delay seen over the last one or two of these windows (clocks drift). */
const CLOCK_WINDOW_MS = 10_000;

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/** The agent tap's clock on the engine tap's: the least (arrival - sent) lately, so a unit's time is never after it arrived. */
class LegClock {
  private current = Infinity;
  private previous = Infinity;
  private windowStart = -Infinity;
  private last = -Infinity;

  sample(agentNow: number, engineNow: number): void {
    if (engineNow - this.windowStart > CLOCK_WINDOW_MS) {
      this.previous = this.current;
      this.current = Infinity;
      this.windowStart = engineNow;
    }
    this.current = Math.min(this.current, engineNow - agentNow);
  }

  /** An agent time on the engine's clock: not after now, not before the last one given (per agent, in order). */
  at(agentT: number, engineNow: number): number {
    const offset = Math.min(this.current, this.previous);
    const t = Number.isFinite(offset) && Number.isFinite(agentT) ? agentT + offset : engineNow;
    this.last = Math.max(this.last, Math.min(t, engineNow));
    return this.last;
  }
}

export interface LegTotals {
  /** Units recorded in the job's tap. */
  kept: number;
  /** Units the agent named as not kept (its link fell behind), and their bytes on the wire. */
  notKept: number;
  notKeptBytes: number;
  /** Units dropped here because they did not read right. */
  unreadable: number;
}

export class LegRecorder {
  private readonly links = new Map<string, TapLink>();
  private readonly clock = new LegClock();
  /** Agent tap seq -> job tap seq, for the recent units. */
  private readonly seqs = new Map<number, number>();
  /** Leg bytes received (what legAck acknowledges). */
  received = 0;
  readonly totals: LegTotals = { kept: 0, notKept: 0, notKeptBytes: 0, unreadable: 0 };

  constructor(
    private readonly host: number,
    private readonly ranks: readonly number[],
    private readonly tap: Tap,
    private readonly onLog: (level: 'info' | 'warn' | 'error', message: string) => void,
  ) {}

  /** One of the host's legs by id (h1.r2.data), registered on first sight; null for anything else. */
  private link(id: unknown): TapLink | null {
    if (typeof id !== 'string') return null;
    const known = this.links.get(id);
    if (known) return known;
    const m = /^h(\d+)\.r(\d+)\.(data|control)$/.exec(id);
    if (!m || Number(m[1]) !== this.host || !this.ranks.includes(Number(m[2]))) return null;
    const link = this.tap.link(
      loopbackLinkInfo(this.host, hostName(this.host), Number(m[2]), m[3] as 'data' | 'control'),
    );
    this.links.set(id, link);
    return link;
  }

  /** A leg message; for units, the bytes to acknowledge (legAck). */
  handle(m: LegMessage): number | undefined {
    switch (m.type) {
      case 'legLink': {
        const link = this.link(m.id);
        const e = m.endpoints;
        if (link && e && typeof e.address === 'string' && isCount(e.clientPort) && isCount(e.serverPort))
          link.info.endpoints = { address: e.address, clientPort: e.clientPort, serverPort: e.serverPort };
        return undefined;
      }
      case 'legUnits':
        return this.units(m.now, m.size, m.units);
      case 'legGap':
        this.gap(m.gap);
        return undefined;
      case 'legBytes':
        if (!Array.isArray(m.links)) return undefined;
        for (const item of m.links) {
          if (!Array.isArray(item)) continue;
          const [id, up, down] = item as unknown[];
          const link = this.link(id);
          if (link && isCount(up) && isCount(down)) {
            link.bytesUp = up;
            link.bytesDown = down;
          }
        }
        return undefined;
    }
  }

  private units(now: unknown, size: unknown, units: unknown): number {
    if (isCount(size)) this.received += size;
    const arrived = this.tap.elapsed();
    if (typeof now === 'number' && Number.isFinite(now)) this.clock.sample(now, arrived);
    if (!Array.isArray(units)) return this.received;
    for (const u of units as LegUnit[]) {
      const why = this.unit(u, arrived);
      if (why) this.unreadable(why);
    }
    return this.received;
  }

  /** Records one unit; the reason it could not, if it could not. */
  private unit(u: LegUnit, arrived: number): string | null {
    const r = (u as { r?: unknown } | null)?.r as Partial<UnitRecord> | undefined;
    if (!r || typeof r !== 'object') return 'no record';
    const link = this.link(r.link);
    if (!link) return `not a leg of h${this.host}: ${String(r.link).slice(0, 40)}`;
    if (r.dir !== 'up' && r.dir !== 'down') return 'no direction';
    if (typeof r.layer !== 'string' || !LAYERS.has(r.layer)) return 'no layer';
    if (typeof r.kind !== 'string' || r.kind.length > 64) return 'no kind';
    if (!isCount(r.length)) return 'no length';
    if (typeof r.verdict !== 'string' || !VERDICTS.has(r.verdict)) return 'no verdict';
    if (typeof r.summary !== 'string') return 'no summary';
    if (r.rank !== undefined && r.rank !== link.info.rank) return `rank ${String(r.rank)} on ${link.info.id}`;
    if (r.round !== undefined && !isCount(r.round)) return 'a round that is not a count';
    if (typeof u.b !== 'string') return 'no bytes';
    const bytes = Buffer.from(u.b, 'base64');
    const seq = this.tap.unit({
      link,
      dir: r.dir,
      layer: r.layer,
      kind: r.kind,
      ...(r.rank !== undefined ? { rank: r.rank } : {}),
      ...(r.round !== undefined ? { round: r.round } : {}),
      length: r.length,
      verdict: r.verdict,
      summary: r.summary,
      bytes: [new Uint8Array(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, r.length))],
      ...(typeof r.flodlError === 'string' ? { flodlError: r.flodlError } : {}),
      ...(r.corruption && typeof r.corruption === 'object' && isCount(r.corruption.offset)
        ? { corruption: r.corruption }
        : {}),
      t: this.clock.at(typeof r.t === 'number' ? r.t : NaN, arrived),
    });
    this.totals.kept++;
    if (isCount(r.seq)) {
      this.seqs.set(r.seq, seq);
      if (this.seqs.size > SEQS_KEPT) this.seqs.delete(this.seqs.keys().next().value!);
    }
    return null;
  }

  private unreadable(why: string): void {
    if (this.totals.unreadable++ === 0)
      this.onLog('warn', `h${this.host}: a loopback-leg unit from its agent was dropped (${why})`);
  }

  private gap(g: LegGap): void {
    const link = this.link(g?.link);
    if (!link || (g.dir !== 'up' && g.dir !== 'down') || !isCount(g.units) || !isCount(g.bytes))
      return this.unreadable('a gap that does not read right');
    const rejected = isCount(g.rejected) && g.rejected > 0 ? g.rejected : 0;
    this.totals.notKept += g.units;
    this.totals.notKeptBytes += g.bytes;
    const what = `${g.units} unit${g.units === 1 ? '' : 's'} (${g.bytes} B) not kept: the agent link fell behind`;
    // The relay checked each of them; those it rejected were reported as its findings.
    const note = rejected ? `; ${rejected} of them rejected by the relay (its findings say why)` : '';
    this.tap.unit({
      link,
      dir: g.dir,
      layer: 'lenframe',
      kind: 'gap',
      rank: link.info.rank,
      length: g.bytes,
      verdict: 'ok',
      summary: `gap: ${what}${note}`,
      t: this.clock.at(typeof g.t === 'number' ? g.t : NaN, this.tap.elapsed()),
    });
    this.onLog('warn', `${link.info.id} ${g.dir}: ${what}${note}`);
  }

  /** The job tap's seq of a unit the agent's tap numbered `agentSeq` (undefined: not recorded here). */
  seqOf(agentSeq: number | undefined): number | undefined {
    return agentSeq === undefined ? undefined : this.seqs.get(agentSeq);
  }
}
