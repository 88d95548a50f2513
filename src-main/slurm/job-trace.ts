// A Slurm job's trace, served piece by piece to its watchers while the
// engine writes it (Save trace in an attached window, `jobTrace`). The
// engine writes DIR/trace.ndjson in batches (TraceWriter gathers lines and
// hands them to the file once per turn of its loop) under a temporary name
// until the run closes it. What is served is cut where the writer's count of
// whole lines says, and only once those bytes are in the file, so a watcher
// never gets half a record; with the end line a trace closed there would
// have, the copy is a complete trace. The watcher names offsets only: the
// one file served is this job's trace.
import fs from 'node:fs';
import type { CommandOf, JobTraceChunk, ReplyOf } from '@shared/lab/contract';
import type { TraceFile } from '../cli/commands/run';
import { encodeEventLine } from '../lab/trace/ndjson-codec';
import { LabError } from '../lab/commands/handler';

/** Bytes per piece: 2 MiB is 2.7 MB of base64 in one WebSocket message. */
export const JOB_TRACE_PIECE = 2 * 1024 * 1024;

export class JobTrace {
  private live: TraceFile | null = null;
  private opened: Promise<fs.promises.FileHandle> | null = null;
  /** The longest length served so far: every byte below it is in the file, in whole lines. */
  private served = 0;
  private ended = false;

  constructor(private readonly piece = JOB_TRACE_PIECE) {}

  /** The run's trace, once its rounds start (before that there is nothing to serve). */
  bind(live: TraceFile): void {
    this.live = live;
  }

  async command(cmd: CommandOf<'jobTrace'>): Promise<ReplyOf<'jobTrace'>> {
    try {
      return { ok: true, chunk: await this.read(cmd.offset, cmd.until) };
    } catch (e) {
      if (e instanceof LabError) return { ok: false, error: e.code, message: e.message };
      return { ok: false, error: 'TRACE_UNREADABLE', message: `the job's trace: ${(e as Error).message}` };
    }
  }

  async read(offset: number, until?: number): Promise<JobTraceChunk> {
    const live = this.live;
    if (this.ended) throw new LabError('NOT_CONNECTED', 'the job has ended');
    if (!live) throw new LabError('NO_TRACE', 'the job has not started its rounds yet: no trace to save');
    let first: { endLine: string; records: number } | null = null;
    if (until === undefined) {
      const cut = await this.cut(live);
      until = cut.until;
      first = cut;
    } else if (until > this.served)
      throw new LabError(
        'BAD_RANGE',
        `jobTrace.until ${until} is past what this job has served (${this.served} bytes): ask without until first`,
      );
    if (offset > until) throw new LabError('BAD_RANGE', `jobTrace.offset ${offset} is past ${until}`);
    const length = Math.min(this.piece, until - offset);
    const buf = Buffer.alloc(length);
    const file = await this.open(live);
    const { bytesRead } = await file.read(buf, 0, length, offset);
    if (bytesRead !== length)
      throw new LabError(
        'TRACE_SHORT',
        `the job's trace ends at ${offset + bytesRead} bytes where ${offset + length} were written`,
      );
    const chunk: JobTraceChunk = { until, data: buf.toString('base64') };
    return first ? { ...chunk, endLine: first.endLine, records: first.records } : chunk;
  }

  /** Where the served copy ends: whole lines the file already has, and what closes them. */
  private async cut(live: TraceFile): Promise<{ until: number; endLine: string; records: number }> {
    const w = live.writer;
    const failed = (e: unknown) =>
      new LabError('TRACE_FAILED', `the job could not write its trace: ${(e as Error).message}`);
    const closing = w.whenClosed;
    if (closing) {
      // Closed: the file is whole under its name, end line and all; serve it as it is.
      await closing.catch((e: unknown) => {
        throw failed(e);
      });
      const size = (await (await this.open(live)).stat()).size;
      this.served = Math.max(this.served, size);
      return { until: size, endLine: '', records: w.position().end.records };
    }
    if (w.error) throw failed(w.error);
    // In one tick: the length counts lines still batched, and flushed() waits until they are written.
    const at = w.position();
    await w.flushed();
    if (w.error) throw failed(w.error);
    await this.open(live);
    this.served = Math.max(this.served, at.bytes);
    return { until: at.bytes, endLine: encodeEventLine(at.end), records: at.end.records };
  }

  /**
   * The trace's file, opened once: while written it is under its temporary name, after the
   * close under its own (the same file renamed, so a handle taken before the rename reads on).
   */
  private open(live: TraceFile): Promise<fs.promises.FileHandle> {
    this.opened ??= (async () => {
      let file: fs.promises.FileHandle;
      try {
        file = await fs.promises.open(live.writingTo, 'r');
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
        file = await fs.promises.open(live.file, 'r');
      }
      if (!(await file.stat()).isFile()) {
        await file.close();
        throw new LabError('TRACE_UNREADABLE', `the job's trace ${live.file} is not a file`);
      }
      return file;
    })();
    // A failed open is tried again by the next request.
    this.opened.catch(() => (this.opened = null));
    return this.opened;
  }

  /** The watch server is closing: no more pieces. */
  async close(): Promise<void> {
    this.ended = true;
    const opened = this.opened;
    this.opened = null;
    if (opened) await (await opened.catch(() => null))?.close();
  }
}
