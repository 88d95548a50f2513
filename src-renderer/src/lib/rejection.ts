// Why a unit was rejected, in the words a person needs: flodl's own error
// (for an HMAC failure, the tag flodl computed against the one the wire
// carried), the byte the lab's fault flipped, and what a rejection on that
// link does to its host, in flodl and in the lab (WIRE.md 4.5 and 7.2).
import type { UnitRecord } from '@shared/lab/records';
import type { LossPolicy } from '@shared/lab/topology';

export interface TagPair {
  computed: string;
  carried: string;
}

/** flodl's "HMAC verification failed (computed 0x…, wire carried 0x…)" as its two tags, or null. */
export function tagsOf(flodlError: string | undefined): TagPair | null {
  const m = /computed 0x([0-9a-f]{16}), wire carried 0x([0-9a-f]{16})/i.exec(flodlError ?? '');
  return m ? { computed: m[1].toLowerCase(), carried: m[2].toLowerCase() } : null;
}

/** The unit's bytes as they were sent: the received bytes with the flipped byte put back. */
export function bytesAsSent(received: Uint8Array, r: UnitRecord): Uint8Array {
  const c = r.corruption;
  if (!c || c.offset >= received.length) return received;
  const sent = Uint8Array.from(received);
  sent[c.offset] = c.sent;
  return sent;
}

/**
 * What happened to the host whose uplink carried a rejected unit: flodl's
 * behaviour, then the lab's. `policy` null: the run had no topology (one
 * connection driven directly), so there was no host or rank to lose.
 */
export function hostLossExplained(r: UnitRecord, policy: LossPolicy | null | undefined): string | null {
  if (r.verdict === 'ok' || r.dir !== 'up' || !/\.uplink\./.test(r.link)) return null;
  const host = r.host !== undefined ? `h${r.host}` : 'the host';
  const flodl =
    `flodl's controller reads each relay connection on its own reader thread; a wire error there ` +
    `(here ${r.verdict}) while any of ${host}'s ranks is alive becomes the reduce loop's error, so flodl ends ` +
    `the whole reduce (WIRE.md 4.5). It never uses a record whose MAC failed, and the stream cannot be ` +
    `resynchronised after it.`;
  const lab =
    policy === null
      ? `This run had no topology (one connection driven directly, no cluster behind it): the reader reported the ` +
        `error and no host or rank was lost.`
      : policy === 'strict'
        ? `This session is strict: the lab does the same and shuts the reduce down.`
        : `This session is elastic (lab-only, WIRE.md 7.2): the lab closes ${host}'s connection instead and declares ` +
          `its ranks dead; the relay's ranks then lose their upstream and exit with code 1, and the survivors go on.`;
  return `${flodl} ${lab}`;
}
