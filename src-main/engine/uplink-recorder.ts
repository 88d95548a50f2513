// The tap records of a connection the controller or the coordinator accepted:
// its link is known only once Hello or the rank's handshake names the peer,
// so units recorded before that are held and land on the link when it is
// bound, together with the bytes counted so far.
import type { Channel as LinkChannel } from '@shared/lab/state';
import type { Conn } from './conn';
import type { Tap, TapLink, UnitInput } from './tap';

export class UplinkRecorder {
  link: TapLink | null = null;
  private held: Omit<UnitInput, 'link'>[] = [];
  constructor(private readonly tap: Tap | undefined) {}

  /** Records a unit; its seq, or undefined while the connection is unnamed (the unit is held). */
  record(u: Omit<UnitInput, 'link'>): number | undefined {
    if (!this.tap) return undefined;
    if (this.link) return this.tap.unit({ ...u, link: this.link });
    this.held.push(u);
    return undefined;
  }

  /** Names the connection: its bytes and held units land on the link. */
  bind(conn: Conn, id: string, from: string, channel: LinkChannel, host: number, rank?: number): void {
    if (!this.tap || this.link) return;
    const link = this.tap.link({ id, from, to: 'controller', channel, kind: 'uplink', host, rank });
    this.link = link;
    if (!conn.counter.bound) conn.counter.bind(link, conn.endpoints, conn);
    for (const u of this.held.splice(0)) this.tap.unit({ ...u, link });
  }
}

/** h3 -> 3; any other host name gets the fallback. */
export function hostIndexOf(name: string, fallback: number): number {
  const m = /^h(\d+)$/.exec(name);
  return m ? Number(m[1]) : fallback;
}
