// Messages between a tap (the forwarding thread) and its decode worker.
import type { Direction } from '@shared/lab/state';
import type { ControlIndexTable } from '@shared/wire/control-msg-tables';
import type { TraceLink } from '../lab/trace/format';
import type { ConnEndpoints } from './link-naming';
import type { DecodedUnit } from './stream-decoder';
import type { ChunkSegment } from './chunk-batch';

export interface WorkerDecodeOptions {
  salt: Uint8Array;
  name?: string;
  ceiling?: number;
  controlVersion?: number;
  indexTable?: ControlIndexTable;
  snapLen?: number;
  maxQueuedBytes?: number;
  sliceMs?: number;
  stallMs?: number;
  listenPort: number;
  /** The tap's clock origin as epoch ms (performance.timeOrigin + its t0): both threads tell the same time. */
  epochT0: number;
}

export type ToWorker =
  | { type: 'open'; conn: number; options: WorkerDecodeOptions; ends: ConnEndpoints }
  /** Chunks of one or more connections, in the order forwarded: segment i is the next `length` bytes. */
  | { type: 'chunks'; bytes: Uint8Array; segments: ChunkSegment[] }
  | { type: 'lost'; conn: number; dir: Direction; t: number; bytes: number }
  | { type: 'end'; conn: number; dir: Direction; by: 'client' | 'server'; reset: boolean; t: number }
  | { type: 'dispose'; conn: number }
  | { type: 'flush'; id: number };

export type FromWorker =
  | { type: 'unit'; conn: number; link: TraceLink; unit: DecodedUnit }
  | {
      type: 'close';
      conn: number;
      link: TraceLink | null;
      by: 'client' | 'server';
      reset: boolean;
      t: number;
    }
  | { type: 'log'; level: 'info' | 'warn' | 'error'; message: string }
  /** Bytes of chunks the worker has taken off its channel (the tap bounds what is in flight). */
  | { type: 'ack'; conn: number; bytes: number }
  | { type: 'flushed'; id: number }
  /** A batch's buffer, its bytes copied out: the tap reuses it for the next batches. */
  | { type: 'buffer'; buffer: ArrayBuffer };
