// The floor of a round: the least time this machine could take for one round
// of H hosts x K ranks, from its own measured rates (bytes per ms) of loopback
// sockets, HMAC-SHA-256, memory copy and fold. Pure arithmetic, so that it can
// be unit-tested and so that every term is printed with the figure.
//
// The work a round must do, per frame of F wire bytes (every rank's frame and
// the consensus have the same size):
//   sockets: each rank's frame to its relay (H*K), each HostFrame up (H), the
//            consensus down to each relay (H), and to each rank (H*K);
//   MAC:     each rank MACs its frame (H*K, in the ranks) and each receiver
//            verifies what it gets: relays (H*K), controller (H), relays the
//            broadcast (H), ranks the consensus (H*K, in the ranks); the
//            engine MACs each HostFrame (H) and the consensus once (1). A
//            frame inside a mux record carries two MACs over the same bytes,
//            the RoundFrame's footer and the record's tag (WIRE.md 3.2, 4.4,
//            4.5): the relay signs both on each HostFrame, the controller
//            verifies both (read_from, then the inner RoundFrame) and signs
//            both on the Broadcast; the relay checks the Broadcast's tag only
//            (its fan-out is verbatim). Direct mode's frames are len-framed:
//            one MAC each;
//   fold:    each relay folds its K deposits (H*K frames), the controller its
//            H HostFrames (fold mode; in direct it sums the H*K frames);
//   copy:    the engine assembles each HostFrame and the consensus from their
//            sums (H + 1 frames); each rank copies its reply out of the
//            socket's chunks (H*K, in the ranks).
// Where it can run: the ranks' share runs in H*K processes at once; the
// engine (relays and controller) is one process and one thread, and it is an
// end of every socket hop. So the floor is the larger of
//   - the critical path: one rank's encode MAC + the engine's serial work +
//     one rank's verify MAC and reply copy, and
//   - all the CPU work spread over the machine's cores.
// Loopback socket time is charged once per hop, to the engine.

export interface MachineRates {
  /** Loopback TCP, one socket pair, bytes per ms. */
  socketBytesPerMs: number;
  /** node:crypto HMAC-SHA-256, bytes per ms. */
  hmacBytesPerMs: number;
  /** Buffer.copy, bytes per ms. */
  copyBytesPerMs: number;
  /** The relay's fold, input bytes per ms. */
  foldBytesPerMs: number;
  cores: number;
}

export interface RoundShape {
  hosts: number;
  ranksPerHost: number;
  /** Wire bytes of one rank's frame (and of the consensus). */
  frameBytes: number;
  mode: 'fold' | 'direct';
}

export interface FloorTerm {
  bytes: number;
  ms: number;
  /** Where it runs: the engine's one thread, or spread over the rank processes. */
  where: 'engine' | 'ranks';
}

export interface RoundFloor {
  floorMs: number;
  /** Which bound set the floor. */
  boundBy: 'criticalPath' | 'cores';
  criticalPathMs: number;
  allCoresMs: number;
  engineMs: number;
  ranksTotalMs: number;
  terms: Record<string, FloorTerm>;
  derivation: string;
}

function positive(name: string, v: number): void {
  if (!(Number.isFinite(v) && v > 0))
    throw new RangeError(`round floor: ${name} must be a positive number, got ${v}`);
}

export function roundFloor(shape: RoundShape, rates: MachineRates): RoundFloor {
  const { hosts: H, ranksPerHost: K, frameBytes: F, mode } = shape;
  for (const [k, v] of Object.entries({ ...shape, mode: 1, ...rates })) positive(k, v as number);
  const HK = H * K;
  // Direct mode: the relays forward every rank's frame up unfolded.
  const upFrames = mode === 'fold' ? H : HK;
  // The footer and the mux record's tag on each HostFrame and Broadcast; len-framed in direct mode.
  const macsPerMuxFrame = mode === 'fold' ? 2 : 1;
  const term = (bytes: number, rate: number, where: FloorTerm['where']): FloorTerm => ({
    bytes,
    ms: bytes / rate,
    where,
  });
  const terms: Record<string, FloorTerm> = {
    socketRankToRelay: term(HK * F, rates.socketBytesPerMs, 'engine'),
    socketUplink: term(upFrames * F, rates.socketBytesPerMs, 'engine'),
    socketBroadcast: term(H * F, rates.socketBytesPerMs, 'engine'),
    socketFanOut: term(HK * F, rates.socketBytesPerMs, 'engine'),
    macRankEncode: term(HK * F, rates.hmacBytesPerMs, 'ranks'),
    macRelayVerify: term(HK * F, rates.hmacBytesPerMs, 'engine'),
    macUplinkEncode: term(mode === 'fold' ? 2 * H * F : 0, rates.hmacBytesPerMs, 'engine'),
    macControllerVerify: term(macsPerMuxFrame * upFrames * F, rates.hmacBytesPerMs, 'engine'),
    macConsensus: term(macsPerMuxFrame * F, rates.hmacBytesPerMs, 'engine'),
    macBroadcastVerify: term(H * F, rates.hmacBytesPerMs, 'engine'),
    macRankVerify: term(HK * F, rates.hmacBytesPerMs, 'ranks'),
    foldRelay: term(mode === 'fold' ? HK * F : 0, rates.foldBytesPerMs, 'engine'),
    foldController: term(upFrames * F, rates.foldBytesPerMs, 'engine'),
    copyEngineEncode: term((mode === 'fold' ? H : 0) * F + F, rates.copyBytesPerMs, 'engine'),
    copyRankReply: term(HK * F, rates.copyBytesPerMs, 'ranks'),
  };
  const all = Object.values(terms);
  const engineMs = all.filter((t) => t.where === 'engine').reduce((a, t) => a + t.ms, 0);
  const ranksTotalMs = all.filter((t) => t.where === 'ranks').reduce((a, t) => a + t.ms, 0);
  // One rank's own serial share: its encode MAC before, its verify and reply copy after the engine's work.
  const oneRankMs = ranksTotalMs / HK;
  const criticalPathMs = engineMs + oneRankMs;
  const allCoresMs = (engineMs + ranksTotalMs) / rates.cores;
  const floorMs = Math.max(criticalPathMs, allCoresMs);
  const boundBy = criticalPathMs >= allCoresMs ? 'criticalPath' : 'cores';
  const r = (x: number) => Math.round(x * 1000) / 1000;
  const derivation =
    `${mode}, ${H} x ${K} x ${F} B frames: engine (one thread) ${r(engineMs)} ms = ` +
    all
      .map((t, i) => [Object.keys(terms)[i], t] as const)
      .filter(([, t]) => t.where === 'engine' && t.bytes > 0)
      .map(([k, t]) => `${k} ${r(t.ms)}`)
      .join(' + ') +
    `; ranks ${r(ranksTotalMs)} ms over ${HK} processes (${r(oneRankMs)} each); ` +
    `floor = max(critical path ${r(engineMs)} + ${r(oneRankMs)} = ${r(criticalPathMs)}, ` +
    `all work / ${rates.cores} cores = ${r(allCoresMs)}) = ${r(floorMs)} ms`;
  return { floorMs, boundBy, criticalPathMs, allCoresMs, engineMs, ranksTotalMs, terms, derivation };
}
