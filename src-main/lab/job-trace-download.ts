// Save trace while the window is attached to a Slurm job: the job's own
// trace, fetched piece by piece over the job's watch channel (`jobTrace`,
// src-main/slurm/job-trace.ts serves it) and written whole or not at all.
// The first piece fixes the length (what the job had written when Save trace
// was pressed, cut at a record's end); the copy is those bytes of the job's
// trace.ndjson exactly, then the end line a trace closed there has.
import { pipeline } from 'node:stream/promises';
import type { JobTraceChunk, LabApi } from '@shared/lab/contract';
import { atomicWriteStream } from '../files/atomic-write';
import { LabError } from './commands/handler';

export interface JobTraceCut {
  /** Bytes of the job's trace saved (a whole-record boundary). */
  until: number;
  /** What closes the copy ('' when the job's trace was closed: its bytes end with its own end line). */
  endLine: string;
  records: number;
  first: Buffer;
}

const NL = 0x0a;

async function piece(remote: LabApi, offset: number, until?: number): Promise<JobTraceChunk> {
  const reply = await remote.command(
    until === undefined ? { type: 'jobTrace', offset } : { type: 'jobTrace', offset, until },
  );
  if (!reply.ok)
    throw new LabError(
      reply.error,
      until === undefined
        ? `the job's trace: ${reply.message}`
        : `the save stopped at byte ${offset} of ${until} of the job's trace (${reply.message}); nothing was written`,
    );
  return reply.chunk;
}

function bad(message: string): LabError {
  return new LabError('BAD_TRACE_PIECE', `the job's watch server sent ${message}; nothing was written`);
}

/** Asks for the first piece: how much of the job's trace the save holds, and how it is closed. */
export async function cutJobTrace(remote: LabApi): Promise<JobTraceCut> {
  const c = await piece(remote, 0);
  if (!Number.isSafeInteger(c.until) || c.until < 1) throw bad(`a length of ${c.until}`);
  if (typeof c.endLine !== 'string' || !Number.isSafeInteger(c.records))
    throw bad('a first piece without its end line');
  const first = Buffer.from(c.data, 'base64');
  if (first.length < 1 || first.length > c.until) throw bad(`${first.length} bytes of ${c.until}`);
  return { until: c.until, endLine: c.endLine, records: c.records!, first };
}

/** The job's trace up to the cut, then its end line, to `dest` (atomic). Answers the records in it. */
export async function writeJobTrace(remote: LabApi, cut: JobTraceCut, dest: string): Promise<number> {
  const out = atomicWriteStream(dest);
  try {
    await pipeline(pieces(remote, cut), out);
  } catch (e) {
    // The temporary file is gone once the stream has closed (the rejection can come first).
    if (!out.closed) await new Promise((resolve) => out.once('close', resolve));
    throw e;
  }
  return cut.records;
}

function pieces(remote: LabApi, cut: JobTraceCut): () => AsyncGenerator<Buffer> {
  return async function* () {
    let offset = cut.first.length;
    let last = cut.first[cut.first.length - 1];
    yield cut.first;
    while (offset < cut.until) {
      const c = await piece(remote, offset, cut.until);
      const data = Buffer.from(c.data, 'base64');
      if (c.until !== cut.until) throw bad(`a piece of a ${c.until}-byte trace for a ${cut.until}-byte save`);
      if (data.length < 1 || data.length > cut.until - offset)
        throw bad(`${data.length} bytes at ${offset} of ${cut.until}`);
      offset += data.length;
      last = data[data.length - 1];
      yield data;
    }
    // The cut is at a record's end: a copy ending mid-line would be a torn trace, never saved as whole.
    if (last !== NL) throw bad('a trace that does not end at a line end');
    if (cut.endLine) yield Buffer.from(cut.endLine);
  };
}
