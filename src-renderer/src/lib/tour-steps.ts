// The guided tour's steps, built from the records of the running session:
// one real round (the latest with a Broadcast), followed from a rank's
// RoundFrame to the fan-out, then a rank's exit and the barrier. Each step
// names the record it selects and says what happens and why.
import type { UnitRecord } from '@shared/lab/records';

export interface TourStep {
  title: string;
  text: string;
  seq: number;
  /** Field to select in the inspector (a path of child indices), if any. */
  field?: number[];
}

const MUX_HEADER = 25;

interface RoundRecords {
  bcast: UnitRecord;
  hostFrame: UnitRecord;
  rankFrames: UnitRecord[];
  fanOut?: UnitRecord;
}

/** The records of the round a Broadcast ends, on its host (by link prefix: records may carry no round). */
function roundOf(records: readonly UnitRecord[], bcast: UnitRecord): RoundRecords | null {
  const prefix = `${bcast.link.split('.')[0]}.`;
  const onHost = (r: UnitRecord) => r.link.startsWith(prefix);
  const before = records.filter((r) => r.seq < bcast.seq && onHost(r));
  const hostFrame = [...before].reverse().find((r) => r.kind === 'HostFrame');
  if (!hostFrame) return null;
  const prevBcast = [...before].reverse().find((r) => r.kind === 'Broadcast' && r.seq < hostFrame.seq);
  const rankFrames = before.filter(
    (r) =>
      r.layer === 'lenframe' &&
      r.kind === 'RoundFrame' &&
      r.dir === 'up' &&
      r.seq < hostFrame.seq &&
      r.seq > (prevBcast?.seq ?? -1),
  );
  if (!rankFrames.length) return null;
  const fanOut = records.find(
    (r) =>
      r.seq > bcast.seq && onHost(r) && r.layer === 'lenframe' && r.kind === 'RoundFrame' && r.dir === 'down',
  );
  return { bcast, hostFrame, rankFrames, fanOut };
}

export function tourSteps(records: readonly UnitRecord[]): TourStep[] {
  let found: RoundRecords | null = null;
  for (let i = records.length - 1; i >= 0 && !found; i--) {
    const r = records[i];
    if (r.kind === 'Broadcast' && r.dir === 'down') {
      const candidate = roundOf(records, r);
      if (candidate?.fanOut) found = candidate;
    }
  }
  if (!found) return [];
  const { bcast, hostFrame, rankFrames, fanOut } = found;
  const round = bcast.round ?? hostFrame.round ?? '?';
  const host = bcast.link.split('.')[0].replace(/^h/, '');
  const rankFrame = rankFrames[0];
  const k = rankFrames.length;
  const f = rankFrame.length - 4;
  const steps: TourStep[] = [
    {
      title: `A rank sends its RoundFrame (round ${round})`,
      text:
        `Rank ${rankFrame.rank} finished its steps and sends its parameters, scaled by its weight, as a RoundFrame of ${f} bytes on its loopback leg to the h${host} relay. The frame ends with an 8-byte MAC keyed with the session salt; the 4-byte length before it is not authenticated.` +
        // A large model's unit is kept only in part: the step must not promise bytes the inspector does not show.
        (rankFrame.captured < rankFrame.length
          ? ` Of this ${rankFrame.length}-byte unit the window kept the first ${rankFrame.captured} bytes (the header and the first tensor bytes), so its MAC is not among the bytes kept here; the relay verified it, or the unit's verdict would say so.`
          : ''),
      seq: rankFrame.seq,
    },
    {
      title: `The relay verifies and folds ${k} frames`,
      text: `The h${host} relay checks each of its ${k} ranks' frames (magic, count, kind, weight, then the MAC) and adds them element by element, summing their weights. Folding on the host means the controller receives one frame for the host, not ${k}.`,
      seq: hostFrame.seq,
    },
    {
      title: 'The HostFrame and its 25-byte header',
      text: `The folded frame goes upstream inside a mux record: magic, version, kind 3 (HostFrame), rank 0 (it speaks for the host), payload length, and an auth_tag over header bytes 0..17 and the payload. The shaded bytes are what the tag covers; the relay signs the folded frame anew.`,
      seq: hostFrame.seq,
      field: [5],
    },
    {
      title: "The controller's consensus",
      text: `Once every expected host has sent its HostFrame for round ${round} (the barrier), the controller folds them and divides by the total mass. The result, the consensus, goes back to each relay as a Broadcast, its weight the sum of the accepted masses.`,
      seq: bcast.seq,
    },
  ];
  if (fanOut)
    steps.push({
      title: 'The fan-out',
      text: `The relay forwards the consensus to each of its ${k} ranks as a len-framed RoundFrame on their loopback legs. A rank adopts it only if its weight is above 0; a weight of 0 means nothing was realized and the rank keeps its own state.`,
      seq: fanOut.seq,
    });
  steps.push({
    title: 'The bytes saved',
    // The bytes the Byte savings panel counts: a rank's frame on the wire carries its 4-byte length prefix.
    text: `Without the relay's fold, h${host} would send its ${k} ranks' frames upstream as they are: ${k} × (${f} B + its 4-byte length prefix) = ${k * (f + 4)} B this round. Folded, it sends one frame of ${f} + a ${MUX_HEADER}-byte mux header = ${hostFrame.length} B: ${(hostFrame.length / (k * (f + 4))).toFixed(3)} of the direct bytes, (${MUX_HEADER} + F) / (K × (4 + F)) with K = ${k}: a little above 1/K, the headers.`,
    seq: hostFrame.seq,
  });
  const exit = [...records].reverse().find((r) => r.kind === 'RankExit' || r.kind === 'DeclareDead');
  steps.push(
    exit
      ? {
          title: 'A rank is gone: the barrier',
          text: `${exit.summary}. The controller's barrier waits for every expected host each round; a rank that stopped sending stalls it until its relay reports RankExit or the controller declares it dead. The round in progress ships without the rank that left: a RoundFrame it had finished and its relay verified stays in the sum, one it was still sending is dropped. Under the elastic policy (the lab's default: a round goes on without a rank declared dead instead of waiting for it) the round completes with the masses that arrived; later rounds fold without it.`,
          seq: exit.seq,
        }
      : {
          title: 'A kill and the barrier',
          text: 'Kill a rank now (select it in Topology, Kill rank) and open this step again. The barrier will wait for it; when its socket closes, its relay sends RankExit and the controller goes on without it (elastic) instead of stalling forever.',
          seq: bcast.seq,
        },
  );
  return steps;
}
