// The measures table of a reproduction (name, historical, flodl 0.7, what it
// means): each run's evidence flattened to rows, numbers formatted for their
// field (grouped digits, bytes, ms; hex where a length is a bit pattern, e.g.
// 4294967295 = 0xFFFFFFFF), and a line of meaning per known measure.
import type { ScenarioEvidence } from '@shared/lab/contract';

export interface MeasureRow {
  key: string;
  historical: string;
  current: string;
  meaning: string;
  /** The two runs disagree: the row that decides the verdict is usually one of these. */
  differs: boolean;
}

/**
 * Lists shown in the pictures instead (per-round rows, finding lines), and `ms`: a scenario's
 * own clock of its run, which would be a second duration beside the one each picture shows
 * (its trace's span); it decides no verdict.
 */
const SKIP = new Set(['rounds', 'findings', 'roundMs', 'ms']);

const MEANINGS: Record<string, string> = {
  recordsSent: 'records the writer sent',
  recordsDecoded: 'records the reader decoded and verified',
  recordsVerified: 'records whose MAC verified at the reader',
  recordsFailed: 'records the reader rejected',
  bytesDropped: 'bytes the reader threw away on a read timeout (the partial frame)',
  readTimeoutsFired: 'socket read timeouts while bytes were awaited',
  timeoutsIgnoredWhileCommitted: 'timeouts the committed reader ignored mid-frame (flodl 0.7)',
  stallMs: 'pause between a record header and its payload',
  readTimeoutMs: "the reader's poll timeout",
  firstError: 'the first error the reader raised, and after how many records',
  writers: 'writers sharing the socket (two interleave their bytes)',
  payloadBytes: 'payload size of each record',
  declaredBytes: 'the length the hostile header declares',
  allocatedBytes: 'bytes the reader allocated for it',
  allocationError: 'what the allocation ended with',
  ceilingBytes: "flodl's frame ceiling: longer lengths are rejected",
  rejected: 'the rejection: code and where',
  arrayBuffersGrewBy: "growth of the reader's ArrayBuffer memory",
  rssGrewBy: 'growth of the resident set',
  queueBound: "the relay's upstream queue bound (records)",
  peakQueueRecords: 'most records queued at once',
  peakQueueBytes: 'most bytes queued at once',
  producerWaitsForRoom: 'times a producer waited for room (backpressure)',
  rssGrowthPeakBytes: 'peak memory growth during the run',
  bytesOffered: 'bytes the ranks offered',
  bytesDelivered: 'bytes the capped reader took',
  controlVersion: 'ControlFrame version (v1 MACs the payload only)',
  macCovers: 'what the MAC covers',
  replayedAs: 'the kind the captured frame was replayed as',
  accepted: 'what the receiver accepted',
  bodyBytesReceived: 'payload bytes before the peer vanished',
  starvationDeadlineMs: 'committed-read starvation deadline',
  observedMs: 'how long the reader was watched after the peer stopped',
  stillWaiting: 'the reader still waiting at the end',
  erroredAfterMs: 'when the reader gave up',
  wedgedRank: 'the rank paused with SIGSTOP',
  stalenessMs: 'heartbeat staleness before a rank is declared dead',
  deadlineMs: "the run's deadline",
  roundsCompleted: 'rounds whose consensus every live rank adopted',
  roundsRequested: 'rounds the run asked for',
  declaredDead: 'ranks the coordinator declared dead',
  checkerNamed: 'ranks the checker named in its findings',
  barrierWaitedFor: 'ranks the fold barrier waited for',
  relayBarrierWaitingForAtDeadline: 'ranks the relay still waited for at the deadline',
  ended: 'how the run ended',
  idleRankFrameBytes: "bytes of the idle rank's RoundFrame (elided = small)",
  otherRankFrameBytes: "bytes of a working rank's RoundFrame",
  mismatches: 'rounds whose consensus differs from the recomputed one',
  poisonedRounds: 'rounds whose consensus holds NaN',
  verdict: "the checker's verdict on the consensus",
  brokenAtRound: 'the round in which the host is broken',
  brokeDuringScatter: 'the break came during the scatter',
  scatterError: 'what the scatter did on the broken link',
  dead: 'ranks dead at the end',
  tcpNoDelay: 'TCP_NODELAY (Nagle off)',
  medianRoundMs: 'median round time',
  extraMsPerRound: 'what Nagle adds per round',
  refusal: "the controller's refusal",
  frameLen: 'length of the frame the peer began',
  error: 'the error raised',
  modelBytes: 'model size per rank',
  recordBytes: 'bytes of one record on the uplink (25-byte mux header + model bytes)',
};

const BYTES = /bytes|Bytes|ceiling|declared|allocated|GrewBy|Growth/;

export function groupDigits(n: number): string {
  return n.toLocaleString('en-US').replace(/,/g, '\u2009');
}

/** A number as its field reads best: bytes grouped, a length past 2^31 also in hex, ms with its unit. */
export function formatMeasure(key: string, v: unknown): string {
  if (v === null || v === undefined) return '–';
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) return String(v);
    if (!Number.isInteger(v)) {
      const s = v.toFixed(Math.abs(v) < 10 ? 3 : 1).replace(/\.?0+$/, '');
      return /Ms$|^ms$/.test(key) ? `${s} ms` : s;
    }
    const hex = Math.abs(v) >= 2 ** 31 ? ` (0x${v.toString(16).toUpperCase()})` : '';
    if (/Ms$|^ms$/.test(key)) return `${groupDigits(v)} ms`;
    if (BYTES.test(key)) return `${groupDigits(v)} B${hex}`;
    return `${groupDigits(v)}${hex}`;
  }
  if (typeof v === 'string') return v;
  if (Array.isArray(v))
    return v.length === 0
      ? '[]'
      : `[${v
          .slice(0, 8)
          .map((x) => formatMeasure(key, x))
          .join(', ')}${v.length > 8 ? ', …' : ''}]`;
  if (typeof v === 'object')
    return Object.entries(v as Record<string, unknown>)
      .map(([k, x]) => `${k} ${formatMeasure(k, x)}`)
      .join(' · ');
  return String(v);
}

export function measureRows(historical: ScenarioEvidence, current: ScenarioEvidence): MeasureRow[] {
  const keys: string[] = [];
  for (const k of [...Object.keys(historical), ...Object.keys(current)])
    if (!keys.includes(k) && !SKIP.has(k)) keys.push(k);
  return keys.map((key) => {
    const h = formatMeasure(key, historical[key]);
    const c = formatMeasure(key, current[key]);
    return { key, historical: h, current: c, meaning: MEANINGS[key] ?? '', differs: h !== c };
  });
}

/** What broke, why, and why flodl 0.7 holds: three lines per built-in (WIRE.md 6). */
export const SCENARIO_NOTES: Record<string, { broke: string; why: string; holds: string }> = {
  'mid-frame-desync': {
    broke: 'A read timeout fired mid-frame and the reader dropped the partial frame.',
    why: 'The next bytes (the payload) were then read as a header: BAD_MAGIC, the stream desynchronised.',
    holds: 'flodl 0.7 commits to a frame at its first byte and ignores timeouts until it is whole.',
  },
  'two-writers': {
    broke: "Two writers shared one socket and interleaved their records' bytes.",
    why: 'A reader then framed a mix of two records: the MAC of the mix fails (HMAC_MISMATCH).',
    holds: 'flodl 0.7 has one writer per socket: every record goes out whole and verifies.',
  },
  'wedged-rank': {
    broke: 'A SIGSTOPped rank stayed connected and silent; the fold barrier waited for it.',
    why: 'Without DeclareDead forwarding, its relay never learned the coordinator had declared it dead.',
    holds: 'flodl 0.7 forwards DeclareDead after the staleness: the barrier releases and rounds go on.',
  },
  'hostile-length': {
    broke: 'A header declared 0xFFFFFFFF bytes and a trusting reader allocated for it.',
    why: 'The length was believed before anything bounded it: 4 GiB for one frame.',
    holds: 'flodl 0.7 checks the ceiling once the 25-byte header is in and rejects it, memory flat.',
  },
  'slow-uplink': {
    broke: "A slow uplink let the relay's upstream queue grow without bound.",
    why: 'Producers never waited: ranks x model x rounds of bytes piled up in memory.',
    holds: 'flodl 0.7 bounds the queue at 64 records: producers wait for room, memory stays flat.',
  },
  'control-replay': {
    broke: 'A captured ControlFrame was replayed with another kind and accepted.',
    why: 'The v1 MAC covered the payload only, not the kind or length.',
    holds: "flodl 0.7's v2 MAC covers kind || len || payload: the replay fails its MAC.",
  },
  'idle-nan': {
    broke: 'An idle rank (mass 0) holding NaN shipped its tensors: 0 x NaN poisoned the consensus.',
    why: 'Without zero-elision the idle payload was summed like any other.',
    holds: "flodl 0.7 elides an idle rank's tensors: nothing of it is summed, the consensus is clean.",
  },
  'broken-host': {
    broke: 'A host died during the scatter and the reduce stopped for everyone.',
    why: 'The historical scatter failed fast on its first write error.',
    holds: 'flodl 0.7 scatters elastically: the broken host is declared dead, the others finish.',
  },
  nagle: {
    broke: 'Small records waited for ACKs: rounds took tens of ms longer.',
    why: 'Nagle was left on (no TCP_NODELAY) with delayed ACKs on the other side.',
    holds: 'flodl 0.7 sets TCP_NODELAY on every socket.',
  },
  'stale-relay': {
    broke: 'A pre-fold relay build sent per-rank Data on the data channel; the controller refused it.',
    why: 'Mixed relay and controller builds speak different data protocols.',
    holds: 'flodl 0.7 relays fold and send HostFrames; the controller names the mismatch if it meets one.',
  },
  'vanished-peer': {
    broke: 'A peer stopped mid-frame with its socket open; the reader waited forever.',
    why: 'A committed read had no deadline once a frame had begun.',
    holds: 'flodl 0.7 ends a starved committed read after its deadline: STARVED, the peer is dropped.',
  },
};
