// The one source of field explanations: every field the dissector shows
// (src-shared/wire/dissect.ts) has an entry here, keyed by its filter name
// (`mux.kind`, `rf.weight`, `ctl.msg`, ...). The window's inspector, the CLI's
// `decode --json` and the Wireshark dissector's field descriptions all read
// this table, so they never disagree. A test walks the dissector over every
// reference vector and generated units of every kind and fails on a field
// this table does not explain. Data only (hence its length: one entry per
// field, kept in one file so the coverage is read in one place).

export interface FieldExplanation {
  /** The filter name, also the key the dissector attaches to the field. */
  key: string;
  /** A short title. */
  label: string;
  /** What the field means, in one line. */
  meaning: string;
  /** What flodl 0.7 does with it. */
  flodl: string;
  /** The WIRE.md section that defines it, e.g. "WIRE.md 3.2". */
  wire: string;
  /** For enumerated fields: each value's name and what it means. */
  values?: Record<string, string>;
  /** relay_lab.lua ProtoField abbreviations this entry describes. */
  wireshark?: string[];
}

const MUX_KINDS: Record<string, string> = {
  Data: 'a rank\u2019s ControlFrame, forwarded verbatim on the control channel (rank field set)',
  Control:
    'a RelayControlMsg between the relay and the controller/coordinator (Hello, HelloAck, RankExit, DeclareDead)',
  HostFrame: 'the host\u2019s folded RoundFrame, relay \u2192 controller, re-signed by the relay',
  Broadcast: 'the round\u2019s consensus RoundFrame, controller \u2192 relay, fanned out to every local rank',
};

const MSG_KINDS: Record<string, string> = {
  Control: 'a ControlMsgWire, coordinator \u2192 rank',
  Timing: 'a TimingMsgWire, rank \u2192 coordinator (batches, heartbeats, acks)',
  Metrics: 'a MetricsMsgWire, rank \u2192 coordinator',
  ParamSnapshotMeta: 'reserved: a no-op on receipt',
  Heartbeat: 'reserved: a no-op on receipt',
  Rendezvous: 'NCCL bootstrap (RendezvousMsgWire)',
  Join: 'membership join (v6 era only)',
};

const CONTROL_VARIANTS: Record<string, string> = {
  RequestParams: 'coordinator asks a rank for its parameters',
  Update: 'new model version and, optionally, the next epoch plan',
  SyncNow: 'coordinator tells ranks to synchronise now',
  StartEpoch: 'start an epoch on the given data partition',
  ExtendPartition: 'grow the rank\u2019s data partition',
  DeclareDead: 'coordinator tells a rank that another rank is dead',
  RequestNewNcclId: 'ask for a fresh NCCL id after a membership change',
  NewNcclSession: 'a new NCCL session: id, new rank, new world size',
  Throttle: 'slow down: the rank is ahead of the others',
  SetGlobalStep: 'set the global step counter',
  Checkpoint: 'save a checkpoint of a model version on a target rank',
  ExecuteEvalCallback: 'run the evaluation callback on a target rank',
  SetEpochCallbackRole: 'choose which rank runs the epoch callback',
  Shutdown: 'stop training',
  ShutdownWithSave: 'stop training after saving (reason code)',
  EpochAggregated: 'the epoch\u2019s aggregated metrics',
  SaveConsensusModel: 'save the consensus model on a target rank (later v2-era table)',
  CoordHeartbeat: 'the coordinator is alive (later v2-era table)',
};

const TIMING_VARIANTS: Record<string, string> = {
  Batch: 'a rank finished a batch: timings, loss, norms',
  SyncAck: 'a rank acknowledges a sync, with divergence and norms',
  Exiting: 'a rank is leaving',
  LrUpdate: 'a rank reports its learning rate',
  Heartbeat: 'a rank is alive, at this step count',
  Intent: 'a rank announces what it intends next (later v2-era table)',
  SnapshotReady: 'a rank\u2019s parameter snapshot is ready',
  EvalResult: 'result of an evaluation callback',
  CheckpointResult: 'result of a checkpoint',
  NewNcclIdGenerated: 'a rank generated the new NCCL id',
  EpochFnElapsed: 'time the epoch callback took',
  DashboardRegister: 'a rank serves a dashboard on this port',
  DashboardSetSvg: 'a rank\u2019s dashboard picture',
  DashboardSetMetadata: 'a rank\u2019s dashboard metadata',
  DashboardSetHardware: 'a rank\u2019s hardware summary',
};

const RELAY_VARIANTS: Record<string, string> = {
  Hello: 'relay \u2192 upstream, first record on each channel: host name and its ranks',
  HelloAck: 'upstream \u2192 relay: the Hello is accepted',
  RankExit: 'relay \u2192 upstream: a local rank left (its socket closed)',
  DeclareDead: 'controller \u2192 relay: stop waiting for this rank (it is out of the round)',
};

const MAC =
  'first 8 bytes of HMAC-SHA256 keyed with the 16-byte session salt; a wrong tag means a wrong salt or tampered bytes';

const e = (
  key: string,
  label: string,
  meaning: string,
  flodl: string,
  wire: string,
  extra: Partial<FieldExplanation> = {},
): FieldExplanation => ({ key, label, meaning, flodl, wire, ...extra });

/** Every entry; `explanationFor(key)` looks one up. */
export const FIELD_EXPLANATIONS: readonly FieldExplanation[] = [
  // MuxRecord: the relay <-> controller/coordinator leg.
  e(
    'mux.magic',
    'Mux magic',
    'Marks a MuxRecord: 0xF10D17D0 (wire d0 17 0d f1); each unit type has its own magic so a reader knows what it is looking at.',
    'The mux reader rejects any other value ("record magic") before reading further.',
    'WIRE.md 3.2',
    { wireshark: ['relaylab.mux.magic'] },
  ),
  e(
    'mux.version',
    'Mux version',
    'MUX_PROTOCOL_VERSION, always 1.',
    'Any other version is rejected right after the magic.',
    'WIRE.md 3.2',
    { wireshark: ['relaylab.mux.version'] },
  ),
  e(
    'mux.kind',
    'Mux kind',
    'What the payload is: 1 Data, 2 Control, 3 HostFrame, 4 Broadcast.',
    'Dispatched on after the MAC check; an unknown kind is an error.',
    'WIRE.md 3.2',
    { values: MUX_KINDS, wireshark: ['relaylab.mux.kind'] },
  ),
  e(
    'mux.rank',
    'Mux rank',
    'The rank a Data record belongs to; always 0 for Control, HostFrame and Broadcast, which speak for the whole host.',
    'The coordinator routes a Data record\u2019s ControlFrame by this rank.',
    'WIRE.md 3.2',
    { wireshark: ['relaylab.mux.rank'] },
  ),
  e(
    'mux.payload_len',
    'Payload length',
    'Bytes of payload after the 25-byte header.',
    'Checked against the frame ceiling before the MAC and before allocating; equal to the ceiling is allowed.',
    'WIRE.md 3.2',
    { wireshark: ['relaylab.mux.payload_len'] },
  ),
  e(
    'mux.auth_tag',
    'Auth tag (MAC)',
    `MAC over header bytes 0..17 and the payload: ${MAC}.`,
    'Verified after the payload is read ("HMAC verification failed"); the relay re-signs every HostFrame it sends.',
    'WIRE.md 2.3',
    { wireshark: ['relaylab.mux.tag'] },
  ),
  e(
    'mux.payload',
    'Payload',
    'The unit the record carries: a ControlFrame (Data), a RelayControlMsg (Control) or a RoundFrame (HostFrame, Broadcast).',
    'Read in 64 MiB chunks; an EOF here is a hard error.',
    'WIRE.md 3.2',
    { wireshark: ['relaylab.mux.payload'] },
  ),
  e(
    'mux.trailing',
    'Bytes after the record',
    'Bytes beyond payload_len: the start of the next record on the stream, not part of this one.',
    'The reader leaves them for the next read.',
    'WIRE.md 3.2',
  ),
  // RelayControlMsg: a mux Control record's payload.
  e(
    'relay.msg',
    'Relay control message',
    'A RelayControlMsg in bincode 2: the variant index (a varint) then its fields.',
    'The relay and the controller use it to say hello, report a rank leaving and declare a rank dead.',
    'WIRE.md 3.3',
    { values: RELAY_VARIANTS, wireshark: ['relaylab.rc.msg'] },
  ),
  e(
    'relay.host',
    'Host',
    'The relay\u2019s host name (Hello).',
    'The controller names the host by it in logs and membership.',
    'WIRE.md 3.3',
    { wireshark: ['relaylab.rc.host'] },
  ),
  e(
    'relay.ranks',
    'Ranks of the host',
    'The ranks this relay serves (Hello), a Vec<u32>.',
    'The controller expects one frame per round from the host for these ranks, folded into one.',
    'WIRE.md 3.3',
    { wireshark: ['relaylab.rc.num_ranks'] },
  ),
  e(
    'relay.rank',
    'Rank',
    'The rank a RankExit or DeclareDead is about.',
    'RankExit removes the rank from the host\u2019s fold; DeclareDead tells the relay to stop waiting for it.',
    'WIRE.md 3.3',
    { wireshark: ['relaylab.rc.rank'] },
  ),
  e(
    'relay.model_sigs',
    'Model signatures',
    'Per-rank 32-byte model signatures in Hello (control protocol v4+).',
    'The coordinator checks that every rank trains the same model.',
    'WIRE.md 3.6',
    { wireshark: ['relaylab.rc.model_sig'] },
  ),
  e(
    'relay.trailing',
    'Bytes after the message',
    'Bytes after the decoded RelayControlMsg.',
    'Ignored: flodl\u2019s decode returns the byte count used and drops the rest.',
    'WIRE.md 3.2',
    { wireshark: ['relaylab.rc.trailing'] },
  ),
  // RoundFrame: the data channel body on every tier.
  e(
    'rf.magic',
    'RoundFrame magic',
    'Marks a RoundFrame: 0xF10D17F1 (wire f1 17 0d f1).',
    'Any other value is rejected before anything else.',
    'WIRE.md 3.4',
    { wireshark: ['relaylab.rf.magic'] },
  ),
  e(
    'rf.num_tensors',
    'Tensor count',
    'How many tensor entries follow the 17-byte header.',
    'Must be at most 65,536 (MAX_ROUND_FRAME_TENSORS), checked before the MAC.',
    'WIRE.md 3.4',
    { wireshark: ['relaylab.rf.num_tensors'] },
  ),
  e(
    'rf.round_kind',
    'Round kind',
    '0 Model (parameters/buffers) or 1 Control (bookkeeping).',
    'Anything else is rejected before the MAC; Control rounds are a pure sum (weight ignored).',
    'WIRE.md 3.4',
    {
      values: {
        Model: 'parameters or buffers, averaged by mass',
        Control: 'bookkeeping, summed; the weight is ignored',
      },
      wireshark: ['relaylab.rf.kind'],
    },
  ),
  e(
    'rf.weight',
    'Weight (mass)',
    'The realized-work mass, an f64: n^\u03b3 for n optimizer steps since the last sync; in a Broadcast, the sum of the accepted masses.',
    'Must be finite and \u2265 0; the relay folds K frames by adding masses; a reply of weight 0 means "nothing realized, keep local state".',
    'WIRE.md 3.4',
    { wireshark: ['relaylab.rf.weight'] },
  ),
  e(
    'rf.tensor',
    'Tensor entry',
    'One tensor: dtype, ndim, dims, nbytes, then the data.',
    'The fold adds tensors position by position; shapes must agree across the host\u2019s frames.',
    'WIRE.md 3.4',
    { wireshark: ['relaylab.rf.tensor'] },
  ),
  e(
    'rf.tensor.dtype',
    'Dtype',
    '0 f32, 1 bf16 (the top 16 bits of an f32).',
    'The parser accepts any value; an unknown dtype fails only at the fold.',
    'WIRE.md 3.4',
    {
      values: { f32: 'IEEE-754 binary32, LE', bf16: 'top 16 bits of an f32, u16 LE' },
      wireshark: ['relaylab.rf.dtype'],
    },
  ),
  e('rf.tensor.ndim', 'Dimensions', 'How many u32 dims follow.', 'Read as a u8.', 'WIRE.md 3.4', {
    wireshark: ['relaylab.rf.ndim'],
  }),
  e(
    'rf.tensor.dims',
    'Shape',
    'The tensor\u2019s shape, one u32 per dimension.',
    'Shapes must match across the frames folded together.',
    'WIRE.md 3.4',
    { wireshark: ['relaylab.rf.dim'] },
  ),
  e(
    'rf.tensor.nbytes',
    'Data bytes',
    'Bytes of element data; 0 with a non-empty shape means "all zeros" (zero-elision, data protocol v3).',
    'The running sum across tensors must stay under the frame ceiling, checked before reading the data.',
    'WIRE.md 3.4',
    { wireshark: ['relaylab.rf.nbytes', 'relaylab.rf.elided'] },
  ),
  e(
    'rf.tensor.data',
    'Tensor data',
    'The raw elements, little-endian, already scaled by the weight on the sender.',
    'Folded (summed) by the relay and the controller; elided + elided stays elided.',
    'WIRE.md 3.4',
    { wireshark: ['relaylab.rf.data'] },
  ),
  e(
    'rf.footer',
    'Footer (MAC)',
    `MAC over every preceding byte of the frame: ${MAC}.`,
    'Verified after the whole body; the relay verifies each rank\u2019s frame and signs the folded one anew.',
    'WIRE.md 2.3',
    { wireshark: ['relaylab.rf.footer'] },
  ),
  e(
    'rf.trailing',
    'Bytes after the footer',
    'Bytes after the RoundFrame footer.',
    'Ignored by flodl\u2019s RoundFrame reader (the streamed rank reader names them as unread).',
    'WIRE.md 3.7',
  ),
  // ControlFrame: the control channel body.
  e(
    'cf.magic',
    'ControlFrame magic',
    'Marks a ControlFrame: 0xF10D17C4 (wire c4 17 0d f1).',
    'Checked first; not covered by the MAC.',
    'WIRE.md 3.5',
    { wireshark: ['relaylab.cf.magic'] },
  ),
  e(
    'cf.version',
    'Control protocol version',
    'CONTROL_PROTOCOL_VERSION: 2 or 3 in the seed era (1 historical, 6 latest).',
    'Checked after the magic; v1 MACs only the payload, v2+ also kind and length.',
    'WIRE.md 3.5',
    { wireshark: ['relaylab.cf.version'] },
  ),
  e(
    'cf.auth_tag',
    'Auth tag (MAC)',
    `MAC over msg_kind, payload_len and the payload (v2+): ${MAC}.`,
    'Verified last, after the payload is read; the relay never checks it (it forwards ControlFrames unopened).',
    'WIRE.md 2.3',
    { wireshark: ['relaylab.cf.tag'] },
  ),
  e(
    'cf.msg_kind',
    'Message kind',
    'Which message type the payload holds (1 Control, 2 Timing, ...).',
    'An unknown kind is an error ("MsgKind") before the length is checked.',
    'WIRE.md 3.5',
    { values: MSG_KINDS, wireshark: ['relaylab.cf.msg_kind'] },
  ),
  e(
    'cf.payload_len',
    'Payload length',
    'Bytes of bincode payload after the 24-byte header.',
    'Must be \u2264 16 MiB (MAX_CONTROL_PAYLOAD), checked before allocating.',
    'WIRE.md 3.5',
    { wireshark: ['relaylab.cf.payload_len'] },
  ),
  e(
    'cf.payload',
    'Payload (bincode)',
    'The message, bincode 2 standard(): variant index then fields.',
    'Decoded only by the coordinator and the rank; the relay is a pure byte router here.',
    'WIRE.md 3.5',
    { wireshark: ['relaylab.cf.payload'] },
  ),
  e(
    'cf.trailing',
    'Bytes after the frame',
    'Bytes after payload_len: the next frame on the stream.',
    'Left for the next read.',
    'WIRE.md 3.5',
  ),
  // ControlFrame messages (ControlMsgWire / TimingMsgWire, both index tables).
  e(
    'ctl.msg',
    'Message variant',
    'The variant of the ControlMsgWire or TimingMsgWire, by its index in the session\u2019s index table (v2 or the later v2-era table).',
    'flodl inserted variants without a version bump, so the index table, not the version, fixes the names.',
    'WIRE.md 3.5',
    {
      values: { ...CONTROL_VARIANTS, ...TIMING_VARIANTS },
      wireshark: ['relaylab.cf.variant', 'relaylab.cf.msg'],
    },
  ),
  e(
    'ctl.trailing',
    'Bytes after the message',
    'Bytes after the decoded message inside the payload.',
    'Ignored, as flodl\u2019s decode ignores them.',
    'WIRE.md 3.5',
  ),
  e(
    'ctl.version',
    'Model version',
    'A model version number (Update, Checkpoint).',
    'Ranks adopt the model of this version.',
    'WIRE.md 3.5',
  ),
  e(
    'ctl.next_plan',
    'Next epoch plan',
    'Optional plan for the next epoch (epoch, partition offset and size).',
    'Lets a rank prefetch its next partition.',
    'WIRE.md 3.5',
  ),
  e(
    'ctl.plan',
    'Epoch plan',
    'EpochPlanWire: epoch, partition_offset, partition_size.',
    'The rank trains that slice of the data in that epoch.',
    'WIRE.md 3.5',
  ),
  e(
    'ctl.epoch',
    'Epoch',
    'An epoch number.',
    'Names the epoch a callback or result belongs to.',
    'WIRE.md 3.5',
  ),
  e(
    'ctl.partition_offset',
    'Partition offset',
    'Start of the rank\u2019s data partition.',
    'Where the rank\u2019s sampler starts.',
    'WIRE.md 3.5',
  ),
  e(
    'ctl.partition_size',
    'Partition size',
    'Length of the rank\u2019s data partition.',
    'How many samples the rank trains.',
    'WIRE.md 3.5',
  ),
  e(
    'ctl.rank',
    'Rank',
    'The rank the message is from or about.',
    'The coordinator keys its per-rank state by it.',
    'WIRE.md 3.5',
  ),
  e(
    'ctl.uid_bytes',
    'NCCL id',
    'The NCCL unique id bytes.',
    'Ranks join the new NCCL session with it.',
    'WIRE.md 3.5',
  ),
  e(
    'ctl.new_rank',
    'New rank',
    'The rank\u2019s number in the new NCCL session.',
    'Ranks renumber after a membership change.',
    'WIRE.md 3.5',
  ),
  e(
    'ctl.new_world_size',
    'New world size',
    'Ranks in the new NCCL session.',
    'Sets the size of the next collective.',
    'WIRE.md 3.5',
  ),
  e(
    'ctl.global_step',
    'Global step',
    'The global optimizer step.',
    'Ranks set their step counter to it.',
    'WIRE.md 3.5',
  ),
  e(
    'ctl.target_rank',
    'Target rank',
    'The rank that must act (checkpoint, evaluate, save).',
    'Only that rank runs the action.',
    'WIRE.md 3.5',
  ),
  e(
    'ctl.schedule_id',
    'Schedule id',
    'Which scheduled evaluation this is.',
    'Matches an EvalResult to its request.',
    'WIRE.md 3.5',
  ),
  e(
    'ctl.reason',
    'Reason',
    'Why training shuts down (a u8 code).',
    'Logged; the model is saved first.',
    'WIRE.md 3.5',
  ),
  e(
    'ctl.metrics',
    'Epoch metrics',
    'EpochMetricsWire; WIRE.md does not give its layout, so the lab shows the bytes.',
    'Shown on the coordinator\u2019s dashboard.',
    'WIRE.md 3.5',
  ),
  e(
    'ctl.batch_ms',
    'Batch time',
    'Milliseconds the batch took.',
    'Used to balance and throttle ranks.',
    'WIRE.md 3.5',
  ),
  e('ctl.data_ms', 'Data time', 'Milliseconds spent loading data.', 'Shows data starvation.', 'WIRE.md 3.5'),
  e(
    'ctl.step_count',
    'Step count',
    'Optimizer steps the rank has taken.',
    'Tells the coordinator how far each rank is (staleness).',
    'WIRE.md 3.5',
  ),
  e('ctl.param_norm', 'Parameter norm', 'Optional norm of the parameters.', 'Monitoring.', 'WIRE.md 3.5'),
  e(
    'ctl.batch_loss',
    'Batch loss',
    'The batch\u2019s loss.',
    'Monitoring and the epoch average.',
    'WIRE.md 3.5',
  ),
  e(
    'ctl.sync_divergence',
    'Sync divergence',
    'Optional distance from the last consensus.',
    'Feeds the adaptive sync interval.',
    'WIRE.md 3.5',
  ),
  e(
    'ctl.divergence',
    'Divergence',
    'Optional distance from consensus at the sync.',
    'Feeds the adaptive sync interval.',
    'WIRE.md 3.5',
  ),
  e(
    'ctl.post_norm',
    'Norm after sync',
    'Optional parameter norm after adopting the consensus.',
    'Monitoring.',
    'WIRE.md 3.5',
  ),
  e(
    'ctl.pre_norm',
    'Norm before sync',
    'Optional parameter norm before the sync.',
    'Monitoring.',
    'WIRE.md 3.5',
  ),
  e('ctl.lr', 'Learning rate', 'The rank\u2019s current learning rate.', 'Monitoring.', 'WIRE.md 3.5'),
  e(
    'ctl.port',
    'Dashboard port',
    'TCP port of the rank\u2019s dashboard.',
    'The coordinator links to it.',
    'WIRE.md 3.5',
  ),
  e(
    'ctl.metric',
    'Metric',
    'An evaluation metric; its type is not given in WIRE.md, so the lab shows the bytes.',
    'Reported to the scheduler.',
    'WIRE.md 3.5',
  ),
  e('ctl.elapsed_ms', 'Elapsed time', 'Milliseconds the action took.', 'Monitoring.', 'WIRE.md 3.5'),
  e(
    'ctl.error',
    'Error',
    'An optional error text; its type is not given in WIRE.md, so the lab shows the bytes.',
    'Logged by the coordinator.',
    'WIRE.md 3.5',
  ),
  e(
    'ctl.svg',
    'Dashboard picture',
    'An SVG; its type is not given in WIRE.md, so the lab shows the bytes.',
    'Shown on the dashboard.',
    'WIRE.md 3.5',
  ),
  e(
    'ctl.json',
    'Dashboard metadata',
    'A JSON text; its type is not given in WIRE.md, so the lab shows the bytes.',
    'Shown on the dashboard.',
    'WIRE.md 3.5',
  ),
  e(
    'ctl.summary',
    'Hardware summary',
    'A text; its type is not given in WIRE.md, so the lab shows the bytes.',
    'Shown on the dashboard.',
    'WIRE.md 3.5',
  ),
  e(
    'ctl.kind',
    'Intent kind',
    'IntentKind; WIRE.md does not give its layout, so the lab shows the bytes.',
    'Tells the coordinator what the rank does next.',
    'WIRE.md 3.5',
  ),
  // Handshakes on the loopback legs.
  e(
    'hs.magic',
    'Handshake magic',
    'Which handshake: 0xF10D17C0 data hello, C1 data ack, C2 control hello, C3 control ack; E0..E3 are channel-select magics.',
    'The relay checks it first; a mismatch fails the relay\u2019s start.',
    'WIRE.md 3.6',
    { wireshark: ['relaylab.hs.magic', 'relaylab.channel_magic'] },
  ),
  e(
    'hs.version',
    'Protocol version',
    'The data (2 or 3) or control protocol version.',
    'Must be equal on both sides, else the relay does not start.',
    'WIRE.md 3.6',
    { wireshark: ['relaylab.hs.version'] },
  ),
  e(
    'hs.rank',
    'Rank',
    'The connecting rank\u2019s id.',
    'Must be one of the host\u2019s ranks and not a duplicate.',
    'WIRE.md 3.6',
    { wireshark: ['relaylab.hs.rank'] },
  ),
  e(
    'hs.world_size',
    'World size',
    'How many ranks the whole job has.',
    'Must equal the relay\u2019s own world size.',
    'WIRE.md 3.6',
    { wireshark: ['relaylab.hs.world_size'] },
  ),
  e(
    'hs.model_sig',
    'Model signature',
    'A 32-byte model signature (control handshake v4+).',
    'Forwarded to the coordinator in Hello.model_sigs.',
    'WIRE.md 3.6',
    { wireshark: ['relaylab.hs.model_sig'] },
  ),
  e(
    'hs.auth_tag',
    'Auth tag (MAC)',
    `MAC over the control handshake\u2019s first 16 bytes (ack: first 8): ${MAC}. Data handshakes have none.`,
    'A wrong salt gives "HMAC verification failed" and fails relay start.',
    'WIRE.md 2.3',
    { wireshark: ['relaylab.hs.tag'] },
  ),
  e(
    'hs.trailing',
    'Bytes after the handshake',
    'Bytes after the fixed-size handshake: the first len-frame of the leg.',
    'Read as the next unit.',
    'WIRE.md 3.6',
  ),
  // Len-frames on the loopback legs.
  e(
    'len.len',
    'Blob length',
    'u32 length of the blob that follows; not authenticated (the blob carries its own MAC).',
    'Rejected when over the frame ceiling; 0 is legal.',
    'WIRE.md 3.7',
    { wireshark: ['relaylab.len.length'] },
  ),
  e(
    'len.blob',
    'Blob',
    'A verbatim RoundFrame (data channel) or ControlFrame (control channel).',
    'The relay verifies a RoundFrame and folds it; a ControlFrame it wraps in a mux Data record unopened.',
    'WIRE.md 3.7',
    { wireshark: ['relaylab.len.blob'] },
  ),
  e(
    'len.trailing',
    'Bytes after the blob',
    'Bytes after the blob: the next len-frame.',
    'Left for the next read.',
    'WIRE.md 3.7',
  ),
  // The lab's own.
  e(
    'lab.error',
    'Dissector error',
    'The dissector could not walk these bytes.',
    'Not a flodl field: the lab shows what went wrong.',
    'WIRE.md 3',
  ),
  e(
    'lab.unit',
    'Unit',
    'Which wire unit the dissector found on the stream.',
    'Not a flodl field: a label of the Wireshark dissector.',
    'WIRE.md 3',
    { wireshark: ['relaylab.unit', 'relaylab.channel'] },
  ),
];

const BY_KEY = new Map(FIELD_EXPLANATIONS.map((x) => [x.key, x]));

/** The explanation of the field with filter name `key`, or undefined. */
export function explanationFor(key: string | undefined): FieldExplanation | undefined {
  return key === undefined ? undefined : BY_KEY.get(key);
}

/** One line for tooltips, status lines and `decode --json`: meaning, what flodl does, the section. */
export function describeField(key: string | undefined): string {
  const x = explanationFor(key);
  return x ? `${x.meaning} flodl: ${x.flodl} (${x.wire})` : '';
}
