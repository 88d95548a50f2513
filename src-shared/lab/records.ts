// What the tap records for every unit that crosses a link.
import type { WireErrorCode } from '../wire/errors';
import type { Direction } from './state';

/** Which decoder applies to a unit's bytes (the dissector takes this). */
export type UnitLayer = 'channelMagic' | 'handshake' | 'lenframe' | 'mux';

export interface UnitRecord {
  /** Monotonic per session; the key to fetch bytes and to jump from findings. */
  seq: number;
  /** Milliseconds since the session started. */
  t: number;
  link: string;
  dir: Direction;
  layer: UnitLayer;
  /** e.g. HostFrame, Broadcast, Data, Hello, HelloAck, RankExit, DeclareDead, RoundFrame, ControlFrame, dataHandshake, DATA magic. */
  kind: string;
  host?: number;
  rank?: number;
  round?: number;
  /** Full length on the wire. */
  length: number;
  /** Bytes kept (the snap length caps it). Less than `length` means captured short. */
  captured: number;
  verdict: 'ok' | WireErrorCode;
  /** One line for the list, e.g. "HostFrame r=0 4 tensors w=4". */
  summary: string;
  /** flodl's own words for this unit's rejection (e.g. the HMAC failure with both tags), when it was rejected. */
  flodlError?: string;
  /** A byte the lab's "corrupt next unit" fault flipped in this unit (the reader saw `received`). */
  corruption?: UnitCorruption;
}

/** One flipped byte: where in the unit, its value as sent and as received, and the bytes around it both ways. */
export interface UnitCorruption {
  /** Offset in the unit (0 = its first header byte). */
  offset: number;
  sent: number;
  received: number;
  /** Up to 16 bytes either side, as sent and as received, starting at `windowOffset` of the unit. */
  windowOffset: number;
  sentHex: string;
  receivedHex: string;
}

export type FindingKind = 'hmac' | 'rejected' | 'dead' | 'stalled' | 'exit' | 'mismatch' | 'fault';

export interface Finding {
  id: number;
  t: number;
  severity: 'error' | 'warn' | 'info';
  kind: FindingKind;
  message: string;
  recordSeq?: number;
  ranks?: number[];
  /**
   * The round a finding is about (a stall's): once that round completes the window shows it as
   * resolved, kept in the history but no longer a current problem.
   */
  round?: number;
}

export interface RoundReport {
  round: number;
  /** Global ranks whose contribution is in this round's consensus. */
  accepted: number[];
  /**
   * The reduce order: per host the ranks in the order its relay folded them (fold), or one group
   * per rank in the controller's order (forward/direct). f32 sums depend on it, so two runs give
   * the same consensus bytes only under the same merge order.
   */
  mergeOrder?: number[][];
  /** SHA-256 (hex) of the consensus frame's bytes (8-byte footer excluded, so independent of the salt) the ranks adopted. */
  consensusSha256?: string;
  verdict: 'ok' | 'mismatch' | 'unchecked';
  /** Largest relative error among the sampled elements against flodl's recomputed consensus (0 when bit for bit). */
  maxRelError?: number;
  /**
   * Information, not part of the verdict: the largest |consensus - exact mean|
   * over every element, the exact mean taken in f64 over the contributions as
   * sent (what f32/bf16 folding costs, e.g. flodl's three bf16 roundings).
   */
  maxAbsErrorVsExactMean?: number;
  /**
   * The reduce order the verdict used: one group per frame the controller
   * summed (fold: a host's ranks in its relay's merge order; forward/direct:
   * one rank per group). Lets a checker outside the engine recompute the consensus.
   */
  groups?: number[][];
  /** Each rank's adopted consensus: weight and SHA-256 of the frame without its footer. */
  adopted?: { rank: number; weight: number; digest: string }[];
  durationMs: number;
  /**
   * Bytes each host sent up (both channels) between the round's start and its end, read off the
   * counters: heartbeats included, and with rounds a few ms apart part of a neighbour's bytes. The
   * savings use dataUpBytesPerHost.
   */
  uplinkBytesPerHost: number[];
  /**
   * Per host, the global ranks whose frames its uplink carried into this
   * round's consensus: in fold the ranks the relay folded (its K for the
   * round), in forward/direct the host's accepted ranks. Empty: the host
   * did not take part in the round. Absent in traces saved before it existed.
   */
  foldedPerHost?: number[][];
  /**
   * Per host, the data-channel bytes its uplink carried up for this round,
   * counted unit by unit (each unit is tagged with its round, so none is
   * counted twice or in another round): fold 25 + F, forward K x (25 + F),
   * direct K x (4 + F) (src-shared/sweep/theory.ts). Absent in older traces.
   */
  dataUpBytesPerHost?: number[];
  /**
   * Per host, parallel to foldedPerHost: each of those ranks' own data bytes
   * for this round (its len-framed RoundFrame, 4 + F, on its leg to the relay
   * or, in direct mode, its own uplink): what direct would carry for it.
   */
  rankDataUpBytes?: number[][];
}
