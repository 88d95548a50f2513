-- relay_lab.lua: Wireshark/tshark dissector for flodl 0.7's relay transport
-- as Relay Lab runs it (the wire format of WIRE.md, docs/trace-format.md).
--
-- Decodes, on any TCP stream it recognises:
--   channel-select magics (4 bytes), rank handshakes (data 16 / ack 8,
--   control 24 or 56 / ack 16), len-framed blobs (u32 length + blob),
--   MuxRecords (25-byte header + payload) with nested RoundFrames,
--   ControlFrames and relay control messages.
-- Units split across TCP segments are reassembled (desegment_len); several
-- units in one segment are all decoded. MACs are shown, not verified: the
-- session salt is not in the capture (`relay-lab decode --salt` checks them).
-- bincode integers are read for their target type as bincode 2 does: a
-- varint marker wider than the target (0xFD where a u32 is expected) is
-- flagged "bincode decode failed", as flodl rejects it. The ControlFrame
-- message index table is a preference (v2 by default, or the later v2-era
-- table with SaveConsensusModel = 16, CoordHeartbeat = 17, TimingMsgWire
-- Intent = 4 and Heartbeat = 5).
--
-- Load it for one run:   tshark -X lua_script:wireshark/relay_lab.lua -r capture.pcapng
-- or on a live capture:  tshark -i lo -X lua_script:wireshark/relay_lab.lua -Y relaylab
-- or install it:         copy to ~/.local/lib/wireshark/plugins/ (Wireshark >= 2.6 on Linux;
--                        see Help > About > Folders > Personal Lua Plugins).
-- It finds streams heuristically (by the first bytes of a connection); the
-- preference relaylab.ports also binds a port range (e.g. 1337-1342) and
-- "Decode As... > RELAYLAB" works for any stream.

local relaylab = Proto("relaylab", "Relay Lab (flodl relay transport)")

-- Constants (WIRE.md 3.8), as u32 read little-endian.
local CHANNEL_RENDEZVOUS = 0xF10D17E0
local CHANNEL_JOIN = 0xF10D17E3
local HS_DATA = 0xF10D17C0
local HS_DATA_ACK = 0xF10D17C1
local HS_CONTROL = 0xF10D17C2
local HS_CONTROL_ACK = 0xF10D17C3
local CONTROL_FRAME_MAGIC = 0xF10D17C4
local MUX_MAGIC = 0xF10D17D0
local ROUND_FRAME_MAGIC = 0xF10D17F1
local MUX_HEADER_LEN = 25
local MAX_ROUND_FRAME_TENSORS = 65536
local MAX_CONTROL_PAYLOAD = 16 * 1024 * 1024

local channel_names = {
  [0xF10D17E0] = "RENDEZVOUS", [0xF10D17E1] = "DATA", [0xF10D17E2] = "CONTROL", [0xF10D17E3] = "JOIN",
}
local handshake_names = {
  [HS_DATA] = "data handshake", [HS_DATA_ACK] = "data ack",
  [HS_CONTROL] = "control handshake", [HS_CONTROL_ACK] = "control ack",
}
local mux_kind_names = { [1] = "Data", [2] = "Control", [3] = "HostFrame", [4] = "Broadcast" }
local relay_msg_names = { [0] = "Hello", [1] = "HelloAck", [2] = "RankExit", [3] = "DeclareDead" }
local round_kind_names = { [0] = "Model", [1] = "Control" }
local dtype_names = { [0] = "f32", [1] = "bf16" }
local dtype_sizes = { [0] = 4, [1] = 2 }
local cf_kind_names = {
  [1] = "Control", [2] = "Timing", [3] = "Metrics", [4] = "ParamSnapshotMeta",
  [5] = "Heartbeat", [6] = "Rendezvous", [7] = "Join",
}
-- Variant indices of the control protocol v2/v3 era (WIRE.md 3.5).
local control_msg_v2 = {
  [0] = "RequestParams", [1] = "Update", [2] = "SyncNow", [3] = "StartEpoch", [4] = "ExtendPartition",
  [5] = "DeclareDead", [6] = "RequestNewNcclId", [7] = "NewNcclSession", [8] = "Throttle",
  [9] = "SetGlobalStep", [10] = "Checkpoint", [11] = "ExecuteEvalCallback", [12] = "SetEpochCallbackRole",
  [13] = "Shutdown", [14] = "ShutdownWithSave", [15] = "EpochAggregated",
}
local timing_msg_v2 = {
  [0] = "Batch", [1] = "SyncAck", [2] = "Exiting", [3] = "LrUpdate", [4] = "Heartbeat", [5] = "SnapshotReady",
  [6] = "EvalResult", [7] = "CheckpointResult", [8] = "NewNcclIdGenerated", [9] = "EpochFnElapsed",
  [10] = "DashboardRegister", [11] = "DashboardSetSvg", [12] = "DashboardSetMetadata", [13] = "DashboardSetHardware",
}
-- The later v2-era table (control-msg-tables.ts 'v2-late').
local control_msg_late = {}
for i, n in pairs(control_msg_v2) do control_msg_late[i] = n end
control_msg_late[16] = "SaveConsensusModel"
control_msg_late[17] = "CoordHeartbeat"
local timing_msg_late = {}
for i, n in pairs(timing_msg_v2) do timing_msg_late[i < 4 and i or i + 1] = n end
timing_msg_late[4] = "Intent"
local INDEX_TABLE_V2 = 0
local INDEX_TABLE_LATE = 1

-- BEGIN GENERATED field descriptions (src-shared/explain; run node scripts/gen-wireshark-explain.mjs)
local EXPLAIN = {
  ["relaylab.mux.magic"] = "Marks a MuxRecord: 0xF10D17D0 (wire d0 17 0d f1); each unit type has its own magic so a reader knows what it is looking at. flodl: The mux reader rejects any other value (\"record magic\") before reading further. (WIRE.md 3.2; Relay Lab filter mux.magic)",
  ["relaylab.mux.version"] = "MUX_PROTOCOL_VERSION, always 1. flodl: Any other version is rejected right after the magic. (WIRE.md 3.2; Relay Lab filter mux.version)",
  ["relaylab.mux.kind"] = "What the payload is: 1 Data, 2 Control, 3 HostFrame, 4 Broadcast. flodl: Dispatched on after the MAC check; an unknown kind is an error. (WIRE.md 3.2; Relay Lab filter mux.kind)",
  ["relaylab.mux.rank"] = "The rank a Data record belongs to; always 0 for Control, HostFrame and Broadcast, which speak for the whole host. flodl: The coordinator routes a Data record’s ControlFrame by this rank. (WIRE.md 3.2; Relay Lab filter mux.rank)",
  ["relaylab.mux.payload_len"] = "Bytes of payload after the 25-byte header. flodl: Checked against the frame ceiling before the MAC and before allocating; equal to the ceiling is allowed. (WIRE.md 3.2; Relay Lab filter mux.payload_len)",
  ["relaylab.mux.tag"] = "MAC over header bytes 0..17 and the payload: first 8 bytes of HMAC-SHA256 keyed with the 16-byte session salt; a wrong tag means a wrong salt or tampered bytes. flodl: Verified after the payload is read (\"HMAC verification failed\"); the relay re-signs every HostFrame it sends. (WIRE.md 2.3; Relay Lab filter mux.auth_tag)",
  ["relaylab.mux.payload"] = "The unit the record carries: a ControlFrame (Data), a RelayControlMsg (Control) or a RoundFrame (HostFrame, Broadcast). flodl: Read in 64 MiB chunks; an EOF here is a hard error. (WIRE.md 3.2; Relay Lab filter mux.payload)",
  ["relaylab.rc.msg"] = "A RelayControlMsg in bincode 2: the variant index (a varint) then its fields. flodl: The relay and the controller use it to say hello, report a rank leaving and declare a rank dead. (WIRE.md 3.3; Relay Lab filter relay.msg)",
  ["relaylab.rc.host"] = "The relay’s host name (Hello). flodl: The controller names the host by it in logs and membership. (WIRE.md 3.3; Relay Lab filter relay.host)",
  ["relaylab.rc.num_ranks"] = "The ranks this relay serves (Hello), a Vec<u32>. flodl: The controller expects one frame per round from the host for these ranks, folded into one. (WIRE.md 3.3; Relay Lab filter relay.ranks)",
  ["relaylab.rc.rank"] = "The rank a RankExit or DeclareDead is about. flodl: RankExit removes the rank from the host’s fold; DeclareDead tells the relay to stop waiting for it. (WIRE.md 3.3; Relay Lab filter relay.rank)",
  ["relaylab.rc.model_sig"] = "Per-rank 32-byte model signatures in Hello (control protocol v4+). flodl: The coordinator checks that every rank trains the same model. (WIRE.md 3.6; Relay Lab filter relay.model_sigs)",
  ["relaylab.rc.trailing"] = "Bytes after the decoded RelayControlMsg. flodl: Ignored: flodl’s decode returns the byte count used and drops the rest. (WIRE.md 3.2; Relay Lab filter relay.trailing)",
  ["relaylab.rf.magic"] = "Marks a RoundFrame: 0xF10D17F1 (wire f1 17 0d f1). flodl: Any other value is rejected before anything else. (WIRE.md 3.4; Relay Lab filter rf.magic)",
  ["relaylab.rf.num_tensors"] = "How many tensor entries follow the 17-byte header. flodl: Must be at most 65,536 (MAX_ROUND_FRAME_TENSORS), checked before the MAC. (WIRE.md 3.4; Relay Lab filter rf.num_tensors)",
  ["relaylab.rf.kind"] = "0 Model (parameters/buffers) or 1 Control (bookkeeping). flodl: Anything else is rejected before the MAC; Control rounds are a pure sum (weight ignored). (WIRE.md 3.4; Relay Lab filter rf.round_kind)",
  ["relaylab.rf.weight"] = "The realized-work mass, an f64: n^γ for n optimizer steps since the last sync; in a Broadcast, the sum of the accepted masses. flodl: Must be finite and ≥ 0; the relay folds K frames by adding masses; a reply of weight 0 means \"nothing realized, keep local state\". (WIRE.md 3.4; Relay Lab filter rf.weight)",
  ["relaylab.rf.tensor"] = "One tensor: dtype, ndim, dims, nbytes, then the data. flodl: The fold adds tensors position by position; shapes must agree across the host’s frames. (WIRE.md 3.4; Relay Lab filter rf.tensor)",
  ["relaylab.rf.dtype"] = "0 f32, 1 bf16 (the top 16 bits of an f32). flodl: The parser accepts any value; an unknown dtype fails only at the fold. (WIRE.md 3.4; Relay Lab filter rf.tensor.dtype)",
  ["relaylab.rf.ndim"] = "How many u32 dims follow. flodl: Read as a u8. (WIRE.md 3.4; Relay Lab filter rf.tensor.ndim)",
  ["relaylab.rf.dim"] = "The tensor’s shape, one u32 per dimension. flodl: Shapes must match across the frames folded together. (WIRE.md 3.4; Relay Lab filter rf.tensor.dims)",
  ["relaylab.rf.nbytes"] = "Bytes of element data; 0 with a non-empty shape means \"all zeros\" (zero-elision, data protocol v3). flodl: The running sum across tensors must stay under the frame ceiling, checked before reading the data. (WIRE.md 3.4; Relay Lab filter rf.tensor.nbytes)",
  ["relaylab.rf.elided"] = "Bytes of element data; 0 with a non-empty shape means \"all zeros\" (zero-elision, data protocol v3). flodl: The running sum across tensors must stay under the frame ceiling, checked before reading the data. (WIRE.md 3.4; Relay Lab filter rf.tensor.nbytes)",
  ["relaylab.rf.data"] = "The raw elements, little-endian, already scaled by the weight on the sender. flodl: Folded (summed) by the relay and the controller; elided + elided stays elided. (WIRE.md 3.4; Relay Lab filter rf.tensor.data)",
  ["relaylab.rf.footer"] = "MAC over every preceding byte of the frame: first 8 bytes of HMAC-SHA256 keyed with the 16-byte session salt; a wrong tag means a wrong salt or tampered bytes. flodl: Verified after the whole body; the relay verifies each rank’s frame and signs the folded one anew. (WIRE.md 2.3; Relay Lab filter rf.footer)",
  ["relaylab.cf.magic"] = "Marks a ControlFrame: 0xF10D17C4 (wire c4 17 0d f1). flodl: Checked first; not covered by the MAC. (WIRE.md 3.5; Relay Lab filter cf.magic)",
  ["relaylab.cf.version"] = "CONTROL_PROTOCOL_VERSION: 2 or 3 in the seed era (1 historical, 6 latest). flodl: Checked after the magic; v1 MACs only the payload, v2+ also kind and length. (WIRE.md 3.5; Relay Lab filter cf.version)",
  ["relaylab.cf.tag"] = "MAC over msg_kind, payload_len and the payload (v2+): first 8 bytes of HMAC-SHA256 keyed with the 16-byte session salt; a wrong tag means a wrong salt or tampered bytes. flodl: Verified last, after the payload is read; the relay never checks it (it forwards ControlFrames unopened). (WIRE.md 2.3; Relay Lab filter cf.auth_tag)",
  ["relaylab.cf.msg_kind"] = "Which message type the payload holds (1 Control, 2 Timing, ...). flodl: An unknown kind is an error (\"MsgKind\") before the length is checked. (WIRE.md 3.5; Relay Lab filter cf.msg_kind)",
  ["relaylab.cf.payload_len"] = "Bytes of bincode payload after the 24-byte header. flodl: Must be ≤ 16 MiB (MAX_CONTROL_PAYLOAD), checked before allocating. (WIRE.md 3.5; Relay Lab filter cf.payload_len)",
  ["relaylab.cf.payload"] = "The message, bincode 2 standard(): variant index then fields. flodl: Decoded only by the coordinator and the rank; the relay is a pure byte router here. (WIRE.md 3.5; Relay Lab filter cf.payload)",
  ["relaylab.cf.variant"] = "The variant of the ControlMsgWire or TimingMsgWire, by its index in the session’s index table (v2 or the later v2-era table). flodl: flodl inserted variants without a version bump, so the index table, not the version, fixes the names. (WIRE.md 3.5; Relay Lab filter ctl.msg)",
  ["relaylab.cf.msg"] = "The variant of the ControlMsgWire or TimingMsgWire, by its index in the session’s index table (v2 or the later v2-era table). flodl: flodl inserted variants without a version bump, so the index table, not the version, fixes the names. (WIRE.md 3.5; Relay Lab filter ctl.msg)",
  ["relaylab.hs.magic"] = "Which handshake: 0xF10D17C0 data hello, C1 data ack, C2 control hello, C3 control ack; E0..E3 are channel-select magics. flodl: The relay checks it first; a mismatch fails the relay’s start. (WIRE.md 3.6; Relay Lab filter hs.magic)",
  ["relaylab.channel_magic"] = "Which handshake: 0xF10D17C0 data hello, C1 data ack, C2 control hello, C3 control ack; E0..E3 are channel-select magics. flodl: The relay checks it first; a mismatch fails the relay’s start. (WIRE.md 3.6; Relay Lab filter hs.magic)",
  ["relaylab.hs.version"] = "The data (2 or 3) or control protocol version. flodl: Must be equal on both sides, else the relay does not start. (WIRE.md 3.6; Relay Lab filter hs.version)",
  ["relaylab.hs.rank"] = "The connecting rank’s id. flodl: Must be one of the host’s ranks and not a duplicate. (WIRE.md 3.6; Relay Lab filter hs.rank)",
  ["relaylab.hs.world_size"] = "How many ranks the whole job has. flodl: Must equal the relay’s own world size. (WIRE.md 3.6; Relay Lab filter hs.world_size)",
  ["relaylab.hs.model_sig"] = "A 32-byte model signature (control handshake v4+). flodl: Forwarded to the coordinator in Hello.model_sigs. (WIRE.md 3.6; Relay Lab filter hs.model_sig)",
  ["relaylab.hs.tag"] = "MAC over the control handshake’s first 16 bytes (ack: first 8): first 8 bytes of HMAC-SHA256 keyed with the 16-byte session salt; a wrong tag means a wrong salt or tampered bytes. Data handshakes have none. flodl: A wrong salt gives \"HMAC verification failed\" and fails relay start. (WIRE.md 2.3; Relay Lab filter hs.auth_tag)",
  ["relaylab.len.length"] = "u32 length of the blob that follows; not authenticated (the blob carries its own MAC). flodl: Rejected when over the frame ceiling; 0 is legal. (WIRE.md 3.7; Relay Lab filter len.len)",
  ["relaylab.len.blob"] = "A verbatim RoundFrame (data channel) or ControlFrame (control channel). flodl: The relay verifies a RoundFrame and folds it; a ControlFrame it wraps in a mux Data record unopened. (WIRE.md 3.7; Relay Lab filter len.blob)",
  ["relaylab.unit"] = "Which wire unit the dissector found on the stream. flodl: Not a flodl field: a label of the Wireshark dissector. (WIRE.md 3; Relay Lab filter lab.unit)",
  ["relaylab.channel"] = "Which wire unit the dissector found on the stream. flodl: Not a flodl field: a label of the Wireshark dissector. (WIRE.md 3; Relay Lab filter lab.unit)",
}
-- END GENERATED field descriptions
local function explain(abbr) return EXPLAIN[abbr] end
-- ProtoField.string takes (abbr, name, desc) before Wireshark 4.2 and
-- (abbr, name, display, desc) from 4.2 on.
local ws_major, ws_minor = get_version():match("^(%d+)%.(%d+)")
local string_takes_display = tonumber(ws_major) > 4 or (tonumber(ws_major) == 4 and tonumber(ws_minor) >= 2)
local function string_field(abbr, name)
  if string_takes_display then return ProtoField.string(abbr, name, base.ASCII, explain(abbr)) end
  return ProtoField.string(abbr, name, explain(abbr))
end

local pf = {
  unit = string_field("relaylab.unit", "Unit"),
  channel_magic = ProtoField.uint32("relaylab.channel_magic", "Channel magic", base.HEX, channel_names, nil, explain("relaylab.channel_magic")),
  channel = string_field("relaylab.channel", "Channel"),

  hs_magic = ProtoField.uint32("relaylab.hs.magic", "Magic", base.HEX, handshake_names, nil, explain("relaylab.hs.magic")),
  hs_version = ProtoField.uint32("relaylab.hs.version", "Protocol version", base.DEC, nil, nil, explain("relaylab.hs.version")),
  hs_rank = ProtoField.uint32("relaylab.hs.rank", "Rank", base.DEC, nil, nil, explain("relaylab.hs.rank")),
  hs_world_size = ProtoField.uint32("relaylab.hs.world_size", "World size", base.DEC, nil, nil, explain("relaylab.hs.world_size")),
  hs_model_sig = ProtoField.bytes("relaylab.hs.model_sig", "Model signature", base.NONE, explain("relaylab.hs.model_sig")),
  hs_tag = ProtoField.bytes("relaylab.hs.tag", "Auth tag (HMAC-SHA256, first 8 bytes)", base.NONE, explain("relaylab.hs.tag")),

  len_length = ProtoField.uint32("relaylab.len.length", "Blob length", base.DEC, nil, nil, explain("relaylab.len.length")),
  len_blob = ProtoField.bytes("relaylab.len.blob", "Blob", base.NONE, explain("relaylab.len.blob")),

  mux_magic = ProtoField.uint32("relaylab.mux.magic", "Magic", base.HEX, nil, nil, explain("relaylab.mux.magic")),
  mux_version = ProtoField.uint32("relaylab.mux.version", "Mux version", base.DEC, nil, nil, explain("relaylab.mux.version")),
  mux_kind = ProtoField.uint8("relaylab.mux.kind", "Kind", base.DEC, mux_kind_names, nil, explain("relaylab.mux.kind")),
  mux_rank = ProtoField.uint32("relaylab.mux.rank", "Rank", base.DEC, nil, nil, explain("relaylab.mux.rank")),
  mux_payload_len = ProtoField.uint32("relaylab.mux.payload_len", "Payload length", base.DEC, nil, nil, explain("relaylab.mux.payload_len")),
  mux_tag = ProtoField.bytes("relaylab.mux.tag", "Auth tag (HMAC-SHA256, first 8 bytes)", base.NONE, explain("relaylab.mux.tag")),
  mux_payload = ProtoField.bytes("relaylab.mux.payload", "Payload", base.NONE, explain("relaylab.mux.payload")),

  rc_msg = ProtoField.uint32("relaylab.rc.msg", "Variant", base.DEC, relay_msg_names, nil, explain("relaylab.rc.msg")),
  rc_host = string_field("relaylab.rc.host", "Host"),
  rc_rank = ProtoField.uint32("relaylab.rc.rank", "Rank", base.DEC, nil, nil, explain("relaylab.rc.rank")),
  rc_num_ranks = ProtoField.uint32("relaylab.rc.num_ranks", "Rank count", base.DEC, nil, nil, explain("relaylab.rc.num_ranks")),
  rc_model_sig = ProtoField.bytes("relaylab.rc.model_sig", "Model signature", base.NONE, explain("relaylab.rc.model_sig")),
  rc_trailing = ProtoField.bytes("relaylab.rc.trailing", "Trailing bytes (ignored by the reader)", base.NONE, explain("relaylab.rc.trailing")),

  rf_magic = ProtoField.uint32("relaylab.rf.magic", "Magic", base.HEX, nil, nil, explain("relaylab.rf.magic")),
  rf_num_tensors = ProtoField.uint32("relaylab.rf.num_tensors", "Tensors", base.DEC, nil, nil, explain("relaylab.rf.num_tensors")),
  rf_kind = ProtoField.uint8("relaylab.rf.kind", "Round kind", base.DEC, round_kind_names, nil, explain("relaylab.rf.kind")),
  rf_weight = ProtoField.double("relaylab.rf.weight", "Weight (mass)", explain("relaylab.rf.weight")),
  rf_tensor = ProtoField.none("relaylab.rf.tensor", "Tensor", explain("relaylab.rf.tensor")),
  rf_dtype = ProtoField.uint8("relaylab.rf.dtype", "Dtype", base.DEC, dtype_names, nil, explain("relaylab.rf.dtype")),
  rf_ndim = ProtoField.uint8("relaylab.rf.ndim", "Dimensions", base.DEC, nil, nil, explain("relaylab.rf.ndim")),
  rf_dim = ProtoField.uint32("relaylab.rf.dim", "Dim", base.DEC, nil, nil, explain("relaylab.rf.dim")),
  rf_nbytes = ProtoField.uint64("relaylab.rf.nbytes", "Data bytes", base.DEC, nil, nil, explain("relaylab.rf.nbytes")),
  rf_elided = ProtoField.bool("relaylab.rf.elided", "Elided (all zeros)", base.NONE, nil, nil, explain("relaylab.rf.elided")),
  rf_data = ProtoField.bytes("relaylab.rf.data", "Data", base.NONE, explain("relaylab.rf.data")),
  rf_footer = ProtoField.bytes("relaylab.rf.footer", "Footer (HMAC-SHA256, first 8 bytes)", base.NONE, explain("relaylab.rf.footer")),

  cf_magic = ProtoField.uint32("relaylab.cf.magic", "Magic", base.HEX, nil, nil, explain("relaylab.cf.magic")),
  cf_version = ProtoField.uint32("relaylab.cf.version", "Control protocol version", base.DEC, nil, nil, explain("relaylab.cf.version")),
  cf_tag = ProtoField.bytes("relaylab.cf.tag", "Auth tag (HMAC-SHA256, first 8 bytes)", base.NONE, explain("relaylab.cf.tag")),
  cf_msg_kind = ProtoField.uint32("relaylab.cf.msg_kind", "Message kind", base.DEC, cf_kind_names, nil, explain("relaylab.cf.msg_kind")),
  cf_payload_len = ProtoField.uint32("relaylab.cf.payload_len", "Payload length", base.DEC, nil, nil, explain("relaylab.cf.payload_len")),
  cf_payload = ProtoField.bytes("relaylab.cf.payload", "Payload (bincode)", base.NONE, explain("relaylab.cf.payload")),
  cf_variant = ProtoField.uint32("relaylab.cf.variant", "Message variant index", base.DEC, nil, nil, explain("relaylab.cf.variant")),
  cf_msg = string_field("relaylab.cf.msg", "Message"),
}
relaylab.fields = pf

local ef = {
  over_ceiling = ProtoExpert.new("relaylab.over_ceiling", "Length exceeds the frame ceiling (rejected before any allocation)",
    expert.group.MALFORMED, expert.severity.ERROR),
  bad_magic = ProtoExpert.new("relaylab.bad_magic", "Unknown relay magic", expert.group.MALFORMED, expert.severity.ERROR),
  unknown_kind = ProtoExpert.new("relaylab.unknown_kind", "Unknown kind", expert.group.MALFORMED, expert.severity.ERROR),
  too_many_tensors = ProtoExpert.new("relaylab.too_many_tensors", "More tensors than MAX_ROUND_FRAME_TENSORS",
    expert.group.MALFORMED, expert.severity.ERROR),
  bad_round_kind = ProtoExpert.new("relaylab.bad_round_kind", "Round kind is neither Model nor Control",
    expert.group.MALFORMED, expert.severity.ERROR),
  bad_weight = ProtoExpert.new("relaylab.bad_weight", "Weight is not finite and >= 0", expert.group.MALFORMED, expert.severity.ERROR),
  length_mismatch = ProtoExpert.new("relaylab.length_mismatch", "Frame length disagrees with its contents",
    expert.group.MALFORMED, expert.severity.ERROR),
  short = ProtoExpert.new("relaylab.short", "Unit captured short (snap length): decoded as far as the bytes go",
    expert.group.UNDECODED, expert.severity.NOTE),
  bincode = ProtoExpert.new("relaylab.bincode", "bincode decode failed (flodl rejects this message)",
    expert.group.MALFORMED, expert.severity.ERROR),
  trailing = ProtoExpert.new("relaylab.trailing", "Bytes after the message or footer: ignored by flodl's reader",
    expert.group.COMMENTS_GROUP, expert.severity.NOTE),
}
relaylab.experts = { ef.over_ceiling, ef.bad_magic, ef.unknown_kind, ef.too_many_tensors, ef.bad_round_kind,
  ef.bad_weight, ef.length_mismatch, ef.short, ef.bincode, ef.trailing }

relaylab.prefs.ceiling = Pref.uint("Frame ceiling (bytes)", 1073741824,
  "Largest accepted payload or blob length (flodl's frame ceiling; default 1 GiB)")
relaylab.prefs.index_table = Pref.enum("ControlFrame message index table", INDEX_TABLE_V2,
  "Which ControlMsgWire/TimingMsgWire index table the session speaks",
  { { 1, "v2 (ControlMsgWire 0-15, Heartbeat = 4)", INDEX_TABLE_V2 },
    { 2, "v2-late (SaveConsensusModel = 16, CoordHeartbeat = 17, Intent = 4, Heartbeat = 5)", INDEX_TABLE_LATE } }, false)
relaylab.prefs.heuristic = Pref.bool("Find streams heuristically", true,
  "Recognise relay streams by their first bytes, whatever the ports")
relaylab.prefs.ports = Pref.range("TCP ports", "", "TCP ports always decoded as relay streams (e.g. 1337-1342)", 65535)

-- Bincode 2 standard() unsigned varint (WIRE.md 3.3) read for a target type
-- ("U16", "U32", "U64" or "Usize"; default U64): value, size; or nil, 1 and
-- bincode's own error text when the marker is wider than the target (bincode
-- 2's InvalidIntegerType), 0xFE (u128) or 0xFF (reserved).
local marker_type = { [251] = "U16", [252] = "U32", [253] = "U64", [254] = "U128", [255] = "Reserved" }
local type_width = { U16 = 2, U32 = 4, U64 = 8, Usize = 8 }
local function varint(tvb, off, target)
  target = target or "U64"
  local b = tvb(off, 1):uint()
  if b < 251 then return b, 1 end
  local found = marker_type[b]
  local width = type_width[found]
  if width == nil or width > type_width[target] then
    local expected = target
    -- bincode 2.0's u64 fast path (9 bytes left) names U32 for 0xFE/0xFF.
    if target == "U64" and width == nil and tvb:len() - off >= 9 then expected = "U32" end
    return nil, 1, string.format("InvalidIntegerType { expected: %s, found: %s }", expected, found)
  end
  if width == 2 then return tvb(off + 1, 2):le_uint(), 3 end
  if width == 4 then return tvb(off + 1, 4):le_uint(), 5 end
  return tvb(off + 1, 8):le_uint64():tonumber(), 9
end

-- The range [off, off + len) as far as the bytes go, and whether it was cut
-- (a unit captured short).
local function available(tvb, off, len)
  local have = tvb:len() - off
  if have >= len then return tvb(off, len), false end
  return tvb(off, have), true
end

-- Adds a varint field read for `target`; a rejected marker raises the
-- bincode error (caught by the message dissector, which flags it).
local function add_varint(tree, field, tvb, off, target)
  local v, n, err = varint(tvb, off, target)
  if v == nil then error({ bincode = err }) end
  tree:add(field, tvb(off, n), v)
  return v, off + n
end

-- The magics a relay stream can start with: a channel select, a rank
-- handshake or its ack, or (controller -> relay) a mux record.
local function is_stream_start(m)
  return (m >= CHANNEL_RENDEZVOUS and m <= CHANNEL_JOIN) or (m >= HS_DATA and m <= HS_CONTROL_ACK) or m == MUX_MAGIC
end

-- A u32 whose upper three wire bytes are 17 0d f1 looks like one of our magics.
local function looks_like_magic(m)
  return m >= 0xF10D1700 and m <= 0xF10D17FF
end

local dissect_relay_control_body
local function dissect_relay_control(tvb, tree)
  local t = tree:add(relaylab, tvb(), "Relay control message")
  local ok, res = pcall(dissect_relay_control_body, tvb, t)
  if ok then return res end
  if type(res) == "table" and res.bincode then
    t:add_proto_expert_info(ef.bincode, "relay_mux: bincode decode failed: " .. res.bincode)
    t:set_text("Relay control message: bincode decode failed: " .. res.bincode)
    return "bincode decode failed"
  end
  error(res)
end

dissect_relay_control_body = function(tvb, t)
  -- mux.rs field types: variant index u32, host String (u64 length), ranks Vec<u32> (usize length), rank u32.
  local idx, off = add_varint(t, pf.rc_msg, tvb, 0, "U32")
  local name = relay_msg_names[idx] or ("variant " .. idx)
  t:set_text("Relay control message: " .. name)
  if idx == 0 then
    local hlen, n, err = varint(tvb, off, "U64")
    if hlen == nil then error({ bincode = err }) end
    t:add(pf.rc_host, tvb(off, n + hlen), tvb(off + n, hlen):string())
    local host = tvb(off + n, hlen):string()
    off = off + n + hlen
    local count
    count, off = add_varint(t, pf.rc_num_ranks, tvb, off, "Usize")
    local ranks = {}
    for _ = 1, count do
      local r
      r, off = add_varint(t, pf.rc_rank, tvb, off, "U32")
      ranks[#ranks + 1] = tostring(r)
    end
    if off < tvb:len() then
      -- v4+ adds model_sigs: Vec<[u8; 32]>.
      local sigs, n2 = varint(tvb, off, "Usize")
      if sigs ~= nil and off + n2 + 32 * sigs == tvb:len() then
        off = off + n2
        for _ = 1, sigs do
          t:add(pf.rc_model_sig, tvb(off, 32))
          off = off + 32
        end
      end
    end
    name = string.format("Hello{%s, [%s]}", host, table.concat(ranks, ","))
  elseif idx == 2 or idx == 3 then
    local r
    r, off = add_varint(t, pf.rc_rank, tvb, off, "U32")
    name = string.format("%s{%d}", name, r)
  elseif idx ~= 1 then
    t:add_proto_expert_info(ef.unknown_kind, "Unknown relay control variant " .. idx)
  end
  if off < tvb:len() then t:add(pf.rc_trailing, tvb(off)):add_proto_expert_info(ef.trailing) end
  t:set_text("Relay control message: " .. name)
  return name
end

local function dissect_round_frame(tvb, tree)
  local t = tree:add(relaylab, tvb(), "RoundFrame")
  t:add_le(pf.rf_magic, tvb(0, 4))
  t:add_le(pf.rf_num_tensors, tvb(4, 4))
  local count = tvb(4, 4):le_uint()
  if count > MAX_ROUND_FRAME_TENSORS then
    t:add_proto_expert_info(ef.too_many_tensors)
    return "RoundFrame (too many tensors)"
  end
  local kind_item = t:add(pf.rf_kind, tvb(8, 1))
  local kind = tvb(8, 1):uint()
  if kind > 1 then kind_item:add_proto_expert_info(ef.bad_round_kind) end
  local weight_item = t:add_le(pf.rf_weight, tvb(9, 8))
  local weight = tvb(9, 8):le_float()
  if weight ~= weight or weight < 0 or weight == math.huge then weight_item:add_proto_expert_info(ef.bad_weight) end
  local off = 17
  local ceiling = relaylab.prefs.ceiling
  local sum = 0
  for i = 0, count - 1 do
    local start = off
    local tt = t:add(pf.rf_tensor, tvb(off, 2))
    local dtype = tvb(off, 1):uint()
    local ndim = tvb(off + 1, 1):uint()
    tt:add(pf.rf_dtype, tvb(off, 1))
    tt:add(pf.rf_ndim, tvb(off + 1, 1))
    off = off + 2
    local dims, numel = {}, 1
    for _ = 1, ndim do
      tt:add_le(pf.rf_dim, tvb(off, 4))
      local d = tvb(off, 4):le_uint()
      dims[#dims + 1] = tostring(d)
      numel = numel * d
      off = off + 4
    end
    tt:add_le(pf.rf_nbytes, tvb(off, 8))
    local nbytes = tvb(off, 8):le_uint64():tonumber()
    off = off + 8
    sum = sum + nbytes
    if sum > ceiling then
      tt:add_proto_expert_info(ef.over_ceiling, "Cumulative tensor bytes exceed the frame ceiling")
      return "RoundFrame (over ceiling)"
    end
    local elided = nbytes == 0 and numel > 0
    tt:add(pf.rf_elided, elided)
    tt:set_text(string.format("Tensor %d: %s [%s]%s", i, dtype_names[dtype] or ("dtype " .. dtype),
      table.concat(dims, ","), elided and " elided" or string.format(" %d bytes", nbytes)))
    local size = dtype_sizes[dtype]
    if not elided and size ~= nil and nbytes ~= numel * size then
      tt:add_proto_expert_info(ef.length_mismatch, "nbytes is not numel x element size")
    end
    if nbytes > 0 then
      local data, cut = available(tvb, off, nbytes)
      tt:add(pf.rf_data, data)
      if cut then
        -- Captured short: the rest of the frame is not in the capture.
        local summary = string.format("RoundFrame %s %d tensors w=%s", round_kind_names[kind] or "?", count, tostring(weight))
        t:set_text(summary)
        return summary
      end
      off = off + nbytes
    end
    tt:set_len(off - start)
  end
  t:add(pf.rf_footer, tvb(off, 8))
  off = off + 8
  if off ~= tvb:len() then t:add_proto_expert_info(ef.length_mismatch, "RoundFrame ends before its container") end
  local summary = string.format("RoundFrame %s %d tensors w=%s", round_kind_names[kind] or "?", count, tostring(weight))
  t:set_text(summary)
  return summary
end

local function dissect_control_frame(tvb, tree)
  local t = tree:add(relaylab, tvb(), "ControlFrame")
  t:add_le(pf.cf_magic, tvb(0, 4))
  t:add_le(pf.cf_version, tvb(4, 4))
  local version = tvb(4, 4):le_uint()
  t:add(pf.cf_tag, tvb(8, 8))
  local kind_item = t:add_le(pf.cf_msg_kind, tvb(16, 4))
  local kind = tvb(16, 4):le_uint()
  if cf_kind_names[kind] == nil then kind_item:add_proto_expert_info(ef.unknown_kind, "Unknown MsgKind " .. kind) end
  local len_item = t:add_le(pf.cf_payload_len, tvb(20, 4))
  local plen = tvb(20, 4):le_uint()
  -- The 16 MiB cap exists from control protocol v2 on; flodl's v1 reader has none.
  if version >= 2 and plen > MAX_CONTROL_PAYLOAD then
    len_item:add_proto_expert_info(ef.over_ceiling, "Payload length exceeds MAX_CONTROL_PAYLOAD (16 MiB)")
    return "ControlFrame (over MAX_CONTROL_PAYLOAD)"
  end
  local summary = "ControlFrame " .. (cf_kind_names[kind] or ("kind " .. kind))
  if plen > 0 then
    t:add(pf.cf_payload, tvb(24, plen))
    local idx, n, err = varint(tvb, 24, "U32")
    if idx ~= nil then
      t:add(pf.cf_variant, tvb(24, n), idx)
      local late = relaylab.prefs.index_table == INDEX_TABLE_LATE
      local names = (kind == 1 and (late and control_msg_late or control_msg_v2))
        or (kind == 2 and (late and timing_msg_late or timing_msg_v2)) or nil
      -- Variant names differ from v4 on; name them only for the v2/v3 era.
      if names ~= nil and version <= 3 then
        if names[idx] ~= nil then
          t:add(pf.cf_msg, tvb(24, plen), names[idx])
          summary = summary .. " " .. names[idx]
        else
          t:add_proto_expert_info(ef.bincode, "bincode decode failed: variant index " .. idx .. " is not in the chosen index table")
        end
      end
    elseif kind == 1 or kind == 2 then
      t:add_proto_expert_info(ef.bincode, "bincode decode failed: " .. err)
    end
  end
  if 24 + plen ~= tvb:len() then t:add_proto_expert_info(ef.length_mismatch, "ControlFrame length disagrees with its container") end
  t:set_text(summary)
  return summary
end

-- A blob or a mux payload: a RoundFrame, a ControlFrame, or opaque bytes.
local function dissect_body(tvb, tree)
  if tvb:len() >= 4 then
    local m = tvb(0, 4):le_uint()
    if m == ROUND_FRAME_MAGIC then return dissect_round_frame(tvb, tree) end
    if m == CONTROL_FRAME_MAGIC then return dissect_control_frame(tvb, tree) end
  end
  return nil
end

-- Decodes a nested frame; when its bytes were cut, a decode that runs out
-- of them keeps the fields it got and says so instead of failing the unit.
local function nested(tree, cut, decode)
  if not cut then return decode() end
  local ok, summary = pcall(decode)
  tree:add_proto_expert_info(ef.short)
  if ok and summary ~= nil then return summary .. " (captured short)" end
  return "(captured short)"
end

local function dissect_mux(tvb, tree, ceiling)
  local t = tree:add(relaylab, tvb(), "MuxRecord")
  t:add(pf.unit, "mux"):set_generated()
  t:add_le(pf.mux_magic, tvb(0, 4))
  t:add_le(pf.mux_version, tvb(4, 4))
  local kind_item = t:add(pf.mux_kind, tvb(8, 1))
  local kind = tvb(8, 1):uint()
  t:add_le(pf.mux_rank, tvb(9, 4))
  local len_item = t:add_le(pf.mux_payload_len, tvb(13, 4))
  local plen = tvb(13, 4):le_uint()
  local name = mux_kind_names[kind] or ("kind " .. kind)
  if plen > ceiling then
    len_item:add_proto_expert_info(ef.over_ceiling)
    t:set_text("MuxRecord " .. name .. " (payload_len over the frame ceiling)")
    return "Mux " .. name .. " over ceiling"
  end
  t:add(pf.mux_tag, tvb(17, 8))
  local summary = "Mux " .. name
  if kind == 1 then summary = summary .. string.format(" r=%d", tvb(9, 4):le_uint()) end
  if mux_kind_names[kind] == nil then kind_item:add_proto_expert_info(ef.unknown_kind, "Unknown mux record kind " .. kind) end
  if plen > 0 then
    local payload, cut = available(tvb, MUX_HEADER_LEN, plen)
    t:add(pf.mux_payload, payload)
    local inner = nested(t, cut, function()
      if kind == 2 then return dissect_relay_control(payload:tvb(), t) end
      return dissect_body(payload:tvb(), t)
    end)
    if inner ~= nil then summary = summary .. ": " .. inner end
  end
  t:set_text("MuxRecord: " .. summary:sub(5))
  return summary
end

local function dissect_handshake(tvb, tree, m)
  local t = tree:add(relaylab, tvb(), "Handshake")
  t:add(pf.unit, "handshake"):set_generated()
  t:add_le(pf.hs_magic, tvb(0, 4))
  t:add_le(pf.hs_version, tvb(4, 4))
  local v = tvb(4, 4):le_uint()
  local summary
  if m == HS_DATA or m == HS_CONTROL then
    t:add_le(pf.hs_rank, tvb(8, 4))
    t:add_le(pf.hs_world_size, tvb(12, 4))
    summary = string.format("%s v%d rank %d/%d", handshake_names[m], v, tvb(8, 4):le_uint(), tvb(12, 4):le_uint())
    if m == HS_CONTROL then
      if tvb:len() == 56 then
        t:add(pf.hs_model_sig, tvb(16, 32))
        t:add(pf.hs_tag, tvb(48, 8))
      else
        t:add(pf.hs_tag, tvb(16, 8))
      end
    end
  else
    summary = string.format("%s v%d", handshake_names[m], v)
    if m == HS_CONTROL_ACK then t:add(pf.hs_tag, tvb(8, 8)) end
  end
  t:set_text("Handshake: " .. summary)
  return summary
end

local function dissect_lenframe(tvb, tree)
  local t = tree:add(relaylab, tvb(), "Len-framed blob")
  t:add(pf.unit, "lenframe"):set_generated()
  t:add_le(pf.len_length, tvb(0, 4))
  local len = tvb(0, 4):le_uint()
  local summary = string.format("LenFrame %d", len)
  if len > 0 then
    local blob, cut = available(tvb, 4, len)
    t:add(pf.len_blob, blob)
    local inner = nested(t, cut, function() return dissect_body(blob:tvb(), t) end)
    if inner ~= nil then summary = summary .. ": " .. inner end
  end
  t:set_text(summary)
  return summary
end

-- The length of the unit starting at off, from its first bytes.
-- Returns len, or nil when more bytes are needed to know, or -1 for a
-- hostile or unknown header (decode what is there, do not desegment).
local function unit_length(tvb, off)
  local avail = tvb:len() - off
  if avail < 4 then return nil end
  local m = tvb(off, 4):le_uint()
  local ceiling = relaylab.prefs.ceiling
  if m >= CHANNEL_RENDEZVOUS and m <= CHANNEL_JOIN then return 4 end
  if m == HS_DATA or m == HS_CONTROL_ACK then return 16 end
  if m == HS_DATA_ACK then return 8 end
  if m == HS_CONTROL then
    if avail < 8 then return nil end
    if tvb(off + 4, 4):le_uint() >= 4 then return 56 end
    return 24
  end
  if m == MUX_MAGIC then
    if avail < 17 then return nil end
    local plen = tvb(off + 13, 4):le_uint()
    if plen > ceiling then return -1 end
    return MUX_HEADER_LEN + plen
  end
  if looks_like_magic(m) or m > ceiling then return -1 end
  return 4 + m
end

local function dissect_unit(tvb, tree, pinfo)
  local m = tvb(0, 4):le_uint()
  if m >= CHANNEL_RENDEZVOUS and m <= CHANNEL_JOIN then
    local t = tree:add(relaylab, tvb(0, 4), "Channel select")
    t:add(pf.unit, "channelMagic"):set_generated()
    t:add_le(pf.channel_magic, tvb(0, 4))
    t:add(pf.channel, channel_names[m]):set_generated()
    t:set_text("Channel select: " .. channel_names[m])
    return channel_names[m] .. " channel magic"
  end
  if handshake_names[m] ~= nil then return dissect_handshake(tvb, tree, m) end
  if m == MUX_MAGIC then return dissect_mux(tvb, tree, relaylab.prefs.ceiling) end
  if looks_like_magic(m) then
    local t = tree:add(relaylab, tvb(), "Unknown unit")
    t:add_le(pf.mux_magic, tvb(0, 4)):add_proto_expert_info(ef.bad_magic)
    return string.format("bad magic 0x%08x", m)
  end
  if m > relaylab.prefs.ceiling then
    local t = tree:add(relaylab, tvb(), "Len-framed blob")
    t:add(pf.unit, "lenframe"):set_generated()
    t:add_le(pf.len_length, tvb(0, 4)):add_proto_expert_info(ef.over_ceiling)
    return string.format("LenFrame %d over ceiling", m)
  end
  return dissect_lenframe(tvb, tree)
end

-- What the first bytes of a unit captured short say it is.
local function short_summary(tvb)
  local n = tvb:len()
  if n >= 9 and tvb(0, 4):le_uint() == MUX_MAGIC then
    local kind = tvb(8, 1):uint()
    return "Mux " .. (mux_kind_names[kind] or ("kind " .. kind)) .. " (captured short)"
  end
  if n >= 4 then
    local m = tvb(0, 4):le_uint()
    if not looks_like_magic(m) then return string.format("LenFrame %d (captured short)", m) end
  end
  return "(captured short)"
end

-- Decodes one unit; a unit whose bytes end early (captured short, or a
-- hostile header) is decoded as far as it goes, with a note.
local function decode_one(tvb, tree, pinfo, short)
  local ok, summary = pcall(dissect_unit, tvb, tree, pinfo)
  if not ok then
    if short then
      tree:add(relaylab, tvb(), "Unit captured short"):add_proto_expert_info(ef.short)
      return short_summary(tvb)
    end
    tree:add_proto_expert_info(ef.length_mismatch, "Malformed: " .. tostring(summary))
    return "(malformed)"
  end
  return summary
end

function relaylab.dissector(tvb, pinfo, tree)
  local total = tvb:len()
  local cut = total < tvb:reported_len()
  local off = 0
  local summaries = {}
  while off < total do
    local need = unit_length(tvb, off)
    if need == nil then
      if cut then
        summaries[#summaries + 1] = decode_one(tvb(off):tvb(), tree, pinfo, true)
        off = total
        break
      end
      pinfo.desegment_offset = off
      pinfo.desegment_len = DESEGMENT_ONE_MORE_SEGMENT
      break
    end
    if need == -1 then
      summaries[#summaries + 1] = decode_one(tvb(off):tvb(), tree, pinfo, true)
      off = total
      break
    end
    if off + need > total then
      if cut then
        summaries[#summaries + 1] = decode_one(tvb(off):tvb(), tree, pinfo, true)
        off = total
        break
      end
      pinfo.desegment_offset = off
      pinfo.desegment_len = off + need - total
      break
    end
    summaries[#summaries + 1] = decode_one(tvb(off, need):tvb(), tree, pinfo, false)
    off = off + need
  end
  if #summaries > 0 then
    pinfo.cols.protocol = "RELAYLAB"
    pinfo.cols.info = table.concat(summaries, "; ")
  end
  return total
end

-- Heuristic: a stream whose bytes start with a relay magic, or with a u32
-- length followed by a RoundFrame or ControlFrame magic.
local function heuristic(tvb, pinfo, tree)
  if not relaylab.prefs.heuristic or tvb:len() < 4 then return false end
  local m = tvb(0, 4):le_uint()
  local match = is_stream_start(m)
  if not match and tvb:len() >= 8 and m <= relaylab.prefs.ceiling then
    local inner = tvb(4, 4):le_uint()
    match = inner == ROUND_FRAME_MAGIC or inner == CONTROL_FRAME_MAGIC
  end
  if not match then return false end
  pinfo.conversation = relaylab
  relaylab.dissector(tvb, pinfo, tree)
  return true
end
relaylab:register_heuristic("tcp", heuristic)

local tcp_port = DissectorTable.get("tcp.port")
tcp_port:add_for_decode_as(relaylab)
local bound_ports = ""
function relaylab.prefs_changed()
  local ports = tostring(relaylab.prefs.ports)
  if ports == bound_ports then return end
  if bound_ports ~= "" then tcp_port:remove(bound_ports, relaylab) end
  if ports ~= "" then tcp_port:add(ports, relaylab) end
  bound_ports = ports
end
