// The terms the window uses, each in two or three plain sentences with the
// WIRE.md section to read next. The Glossary drawer lists them; the field
// help line and the findings link to them by id.

export interface GlossaryTerm {
  id: string;
  term: string;
  text: string;
  wire?: string;
}

const t = (id: string, term: string, text: string, wire?: string): GlossaryTerm => ({ id, term, text, wire });

/**
 * How flodl turns an f32 into bf16 (WIRE.md 3.4, src-shared/fold/encode.ts does the same), said
 * where bf16 appears: the glossary, a bf16 tensor's field help, the topology form's dtype.
 */
export const BF16_ROUNDING =
  'An f32 is rounded to nearest, ties to even, on its bit pattern: flodl adds 0x7FFF plus the lowest bit it keeps ((bits >> 16) & 1) and keeps the top 16 bits, so a value halfway between two bf16s goes to the one whose last bit is 0 (1.00390625 becomes 1, 1.01171875 becomes 1.015625). ' +
  'A NaN stays a NaN: its top 16 bits with the quiet bit 0x0040 set, so rounding never carries it into infinity. bf16 back to f32 is exact (the 16 bits shifted up).';

/** The elastic policy in the dead finding's words (src-shared/explain/findings.ts). */
const ELASTIC =
  'What a round does when a rank is missing, a session setting (WIRE.md 7, decision 2). Elastic, the lab\u2019s default: a round goes on without a rank declared dead instead of waiting for it; the round completes with the ranks that answered, and the consensus weight is the sum of the masses that arrived. ' +
  'Strict is flodl\u2019s own code: every rank is waited for, and a relay that closes or a RankExit of a live rank shuts the reduce down cleanly.';

export const GLOSSARY: readonly GlossaryTerm[] = [
  t(
    'rank',
    'rank',
    'One training process, numbered 0..world_size-1. Each rank trains on its slice of the data and, every round, sends its parameters (a RoundFrame) to its host\u2019s relay.',
    'WIRE.md 4.6',
  ),
  t(
    'host',
    'host',
    'A machine running one or more ranks and one relay. Ranks talk to their relay over loopback; only the relay talks across the network.',
    'WIRE.md 3.1',
  ),
  t(
    'relay',
    'relay',
    'The per-host agent between the local ranks and the controller. On the data channel it verifies each rank\u2019s frame and folds them into one; on the control channel it forwards ControlFrames unopened.',
    'WIRE.md 4.2',
  ),
  t(
    'controller',
    'controller',
    'The process that receives one HostFrame per host each round, folds them into the consensus, and broadcasts it back. It also tells relays when a rank is dead.',
    'WIRE.md 4.5',
  ),
  t(
    'coordinator',
    'coordinator',
    'The control-channel peer of every rank (through the relays): it sends ControlMsgWire messages (start epoch, sync, shutdown) and receives TimingMsgWire reports (batches, heartbeats).',
    'WIRE.md 4.3',
  ),
  t(
    'fold',
    'fold',
    'Adding frames element by element, with their weights (masses) summed. The relay folds its K ranks\u2019 frames into one HostFrame, so the controller receives one frame per host instead of one per rank.',
    'WIRE.md 4.4',
  ),
  t(
    'k',
    'K',
    'The number of ranks on a host. Folding sends one frame where direct mode sends K, so the uplink carries 1/K of the bytes (plus a 25-byte mux header).',
    'WIRE.md 4.4',
  ),
  t('elastic', 'elastic / strict', ELASTIC, 'WIRE.md 7'),
  t(
    'bf16',
    'bf16 (wire dtype)',
    `bfloat16: the top 16 bits of an f32 (sign, the 8 exponent bits, 7 of the 23 mantissa bits), so a bf16 frame carries half the bytes of an f32 one with the same range and about 3 significant digits. ${BF16_ROUNDING} The fold adds in f32 and re-encodes the sums the same way.`,
    'WIRE.md 3.4',
  ),
  t(
    'index-table',
    'control index table (v2, v2-late)',
    'Which number stands for which control message (ControlMsgWire, TimingMsgWire) in a ControlFrame\u2019s bincode payload. flodl inserted message variants without bumping the version, so the version alone does not fix the numbers and every end of the control channel must agree on one table, a session setting: v2 (the 000254b table, Heartbeat = 4, the default) or v2-late (the later v2-era table: Intent = 4, Heartbeat = 5, and ControlMsgWire 16 and 17). A message decoded with the wrong table gets another name.',
    'WIRE.md 3.5',
  ),
  t(
    'hostframe',
    'HostFrame',
    'A mux record (kind 3) carrying the host\u2019s folded RoundFrame from the relay to the controller. Its header rank is always 0: it speaks for the whole host.',
    'WIRE.md 3.2',
  ),
  t(
    'broadcast',
    'Broadcast',
    'A mux record (kind 4) carrying the round\u2019s consensus RoundFrame from the controller to each relay, which fans it out to every local rank.',
    'WIRE.md 3.2',
  ),
  t(
    'roundframe',
    'RoundFrame',
    'The data channel\u2019s unit: a 17-byte header (magic, tensor count, round kind, weight), the tensors, and an 8-byte MAC footer. The same shape travels on every tier.',
    'WIRE.md 3.4',
  ),
  t(
    'controlframe',
    'ControlFrame',
    'The control channel\u2019s unit: a 24-byte header (magic, version, MAC, message kind, length) and a bincode message. Relays carry it inside mux Data records without opening it.',
    'WIRE.md 3.5',
  ),
  t(
    'len-frame',
    'len-frame',
    'A u32 length followed by that many bytes: how ranks and their relay delimit RoundFrames and ControlFrames on the loopback legs. The length is not authenticated; the blob carries its own MAC.',
    'WIRE.md 3.7',
  ),
  t(
    'mux',
    'mux record',
    'The relay \u2194 controller/coordinator unit: a 25-byte header (magic, version, kind, rank, payload length, MAC) and a payload. One TCP connection carries every record of a host.',
    'WIRE.md 3.2',
  ),
  t(
    'salt',
    'salt',
    'The 16-byte session secret every process is given at launch. It is the HMAC key: a frame signed with another salt fails verification, so a stray or stale process cannot inject data.',
    'WIRE.md 2.2',
  ),
  t(
    'mac',
    'MAC',
    'A message authentication code: here the first 8 bytes of HMAC-SHA256 keyed with the salt. Each unit\u2019s MAC covers a stated byte range; a mismatch means a wrong salt or altered bytes.',
    'WIRE.md 2.3',
  ),
  t(
    'frame-ceiling',
    'frame ceiling',
    'The largest length a reader accepts (1 GiB by default). It is checked before allocating or verifying, so a hostile length cannot make a process allocate gigabytes.',
    'WIRE.md 3.2',
  ),
  t(
    'staleness',
    'staleness',
    'How far behind the current round a rank\u2019s contribution is. The weight n^\u03b3 (n steps since the last sync) lets fresher work count more.',
    'WIRE.md 3.4',
  ),
  t(
    'committed-read',
    'committed read',
    'A read that consumes bytes only once the whole unit is there. flodl\u2019s readers are frame-atomic: a timeout mid-frame keeps what was read, unlike a naive reader that loses it and desynchronises the stream.',
    'WIRE.md 4.1',
  ),
  t(
    'naive-reader',
    'NaiveReader',
    'The lab\u2019s deliberately wrong reader that drops a partial frame on a read timeout, to show the desynchronisation that committed reads prevent.',
    'WIRE.md 4.1',
  ),
  t(
    'snap-length',
    'snap length',
    'How many bytes of each unit the lab keeps for inspection (like tcpdump\u2019s -s). A unit captured short shows its fields as far as the kept bytes go; its MAC cannot be checked.',
  ),
  t(
    'lab-only',
    'lab-only modes',
    'Modes flodl does not have, offered to compare: direct (every rank sends to the controller) and forward (the relay forwards each rank\u2019s frame without folding). They show what folding saves.',
  ),
  t(
    'barrier',
    'barrier',
    'The controller waits for every expected host each round before it folds. A dead rank stalls it until the relay reports RankExit or the controller declares the rank dead.',
    'WIRE.md 4.5',
  ),
  t(
    'consensus',
    'consensus',
    'The round\u2019s result: the fold of every host\u2019s frame, divided by the total mass. The controller sends it back as a Broadcast.',
    'WIRE.md 4.5',
  ),
];

const BY_ID = new Map(GLOSSARY.map((g) => [g.id, g]));

export function glossaryTerm(id: string): GlossaryTerm | undefined {
  return BY_ID.get(id);
}

/** Glossary ids a field's explanation mentions (by filter-name prefix and words), for links from the field help line. */
export function termsForField(key: string, text: string): string[] {
  const ids = new Set<string>();
  const prefix = key.split('.')[0];
  if (prefix === 'mux') ids.add('mux');
  if (prefix === 'rf') ids.add('roundframe');
  if (prefix === 'cf' || prefix === 'ctl') ids.add('controlframe');
  if (prefix === 'len') ids.add('len-frame');
  const lower = text.toLowerCase();
  const words: [string, string][] = [
    ['hmac', 'mac'],
    ['salt', 'salt'],
    ['frame ceiling', 'frame-ceiling'],
    ['hostframe', 'hostframe'],
    ['broadcast', 'broadcast'],
    ['fold', 'fold'],
    ['relay', 'relay'],
    ['controller', 'controller'],
    ['coordinator', 'coordinator'],
    ['rank', 'rank'],
    ['host', 'host'],
    ['staleness', 'staleness'],
    ['bf16', 'bf16'],
    ['index table', 'index-table'],
    ['elastic', 'elastic'],
  ];
  for (const [w, id] of words) if (lower.includes(w)) ids.add(id);
  return [...ids];
}

/** The text of section `num` ("3.2", "2.3") of a Markdown spec, heading included; '' if absent. */
export function specSection(markdown: string, num: string): string {
  const lines = markdown.split('\n');
  const depth = num.includes('.') ? 3 : 2;
  const start = lines.findIndex((l) => new RegExp(`^#{2,3} ${num.replace('.', '\\.')}[. ]`).test(l));
  if (start < 0) return '';
  let end = start + 1;
  while (end < lines.length) {
    const m = /^(#{1,3}) /.exec(lines[end]);
    if (m && m[1].length <= depth) break;
    end++;
  }
  return lines.slice(start, end).join('\n').trim();
}

/** "WIRE.md 3.2" -> "3.2". */
export function sectionNumber(ref: string): string | null {
  return /WIRE\.md (\d+(?:\.\d+)?)/.exec(ref)?.[1] ?? null;
}
