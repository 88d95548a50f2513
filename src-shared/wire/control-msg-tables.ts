// The ControlFrame message index tables (WIRE.md 3.5). flodl inserted enum
// variants without a version bump, so a version number does not fix the
// indices: the lab names the table it speaks (ControlIndexTable, a session
// setting; v2 by default) and every decoder takes it.
//
// Field types are the ones WIRE.md 3.5 gives. Where it gives none, the field
// says so instead of guessing: an integer of unstated width ('uint?') is read
// with u64 rules (the widest varint; flodl may reject a marker the lab
// accepts there), and a field whose encoding cannot be known ('opaque') stops
// the decode: the rest of the message is shown as bytes.

/** The index table a session speaks. */
export type ControlIndexTable = 'v2' | 'v2-late';

export const CONTROL_INDEX_TABLES: readonly ControlIndexTable[] = ['v2', 'v2-late'];
export const DEFAULT_CONTROL_INDEX_TABLE: ControlIndexTable = 'v2';

export const CONTROL_INDEX_TABLE_LABELS: Record<ControlIndexTable, string> = {
  v2: 'v2 table (000254b): ControlMsgWire 0-15, TimingMsgWire Heartbeat = 4',
  'v2-late':
    'later v2-era table: ControlMsgWire adds SaveConsensusModel = 16, CoordHeartbeat = 17; TimingMsgWire has Intent = 4, Heartbeat = 5',
};

export function isControlIndexTable(s: unknown): s is ControlIndexTable {
  return (CONTROL_INDEX_TABLES as readonly unknown[]).includes(s);
}

export type FieldType =
  'u8' | 'u16' | 'u32' | 'u64' | 'uint?' | 'f64' | 'bytes' | 'optF64' | 'plan' | 'optPlan' | 'opaque';

export interface FieldSpec {
  name: string;
  type: FieldType;
  /** Why the type is what it is (for 'uint?' and 'opaque': what WIRE.md 3.5 does not give). */
  note?: string;
}

export interface VariantSpec {
  name: string;
  fields: FieldSpec[];
}

export const UINT_UNSTATED = 'integer width not given in WIRE.md 3.5: read with u64 rules';
const opaque = (name: string, what: string): FieldSpec => ({
  name,
  type: 'opaque',
  note: `${what} not given in WIRE.md 3.5: the rest of the message is not decoded`,
});
const u = (name: string): FieldSpec => ({ name, type: 'uint?', note: UINT_UNSTATED });
const f = (name: string, type: FieldType): FieldSpec => ({ name, type });
const v = (name: string, ...fields: FieldSpec[]): VariantSpec => ({ name, fields });

/** EpochPlanWire{epoch, partition_offset, partition_size: u64}. */
export const EPOCH_PLAN_FIELDS = ['epoch', 'partition_offset', 'partition_size'] as const;

const CONTROL_V2: VariantSpec[] = [
  v('RequestParams'),
  v('Update', f('version', 'u64'), f('next_plan', 'optPlan')),
  v('SyncNow'),
  v('StartEpoch', f('plan', 'plan')),
  v('ExtendPartition', u('partition_offset'), u('partition_size')),
  v('DeclareDead', f('rank', 'u64')),
  v('RequestNewNcclId'),
  v('NewNcclSession', f('uid_bytes', 'bytes'), u('new_rank'), u('new_world_size')),
  v('Throttle'),
  v('SetGlobalStep', u('global_step')),
  v('Checkpoint', u('version'), u('target_rank')),
  v('ExecuteEvalCallback', u('schedule_id'), u('epoch'), u('target_rank')),
  v('SetEpochCallbackRole', u('rank')),
  v('Shutdown'),
  v('ShutdownWithSave', f('reason', 'u8')),
  v('EpochAggregated', opaque('metrics', 'EpochMetricsWire field layout')),
];

const TIMING_V2: VariantSpec[] = [
  v(
    'Batch',
    u('rank'),
    f('batch_ms', 'f64'),
    f('data_ms', 'f64'),
    u('step_count'),
    f('param_norm', 'optF64'),
    f('batch_loss', 'f64'),
    f('sync_divergence', 'optF64'),
  ),
  v(
    'SyncAck',
    u('rank'),
    u('step_count'),
    f('divergence', 'optF64'),
    f('post_norm', 'optF64'),
    f('pre_norm', 'optF64'),
  ),
  v('Exiting', u('rank')),
  v('LrUpdate', u('rank'), f('lr', 'f64')),
  v('Heartbeat', u('rank'), u('step_count')),
  v('SnapshotReady', u('rank')),
  v('EvalResult', u('rank'), u('schedule_id'), u('epoch'), opaque('metric', "metric's type")),
  v('CheckpointResult', u('rank'), u('version'), u('elapsed_ms'), opaque('error', "error's type")),
  v('NewNcclIdGenerated', u('rank'), opaque('uid_bytes', "uid_bytes' type")),
  v('EpochFnElapsed', u('rank'), u('epoch'), u('elapsed_ms')),
  v('DashboardRegister', u('rank'), f('port', 'u16')),
  v('DashboardSetSvg', u('rank'), opaque('svg', "svg's type")),
  v('DashboardSetMetadata', u('rank'), opaque('json', "json's type")),
  v('DashboardSetHardware', u('rank'), opaque('summary', "summary's type")),
];

const CONTROL_LATE: VariantSpec[] = [
  ...CONTROL_V2,
  v('SaveConsensusModel', u('target_rank')),
  v('CoordHeartbeat'),
];

const TIMING_LATE: VariantSpec[] = [
  ...TIMING_V2.slice(0, 4),
  v('Intent', u('rank'), opaque('kind', 'IntentKind')),
  ...TIMING_V2.slice(4),
];

export type MsgFamily = 'ControlMsgWire' | 'TimingMsgWire';

export const MSG_TABLES: Record<ControlIndexTable, Record<MsgFamily, VariantSpec[]>> = {
  v2: { ControlMsgWire: CONTROL_V2, TimingMsgWire: TIMING_V2 },
  'v2-late': { ControlMsgWire: CONTROL_LATE, TimingMsgWire: TIMING_LATE },
};

/** The index of variant `name` in `family` under `table` (-1 if the table has none). */
export function variantIndex(table: ControlIndexTable, family: MsgFamily, name: string): number {
  return MSG_TABLES[table][family].findIndex((s) => s.name === name);
}
