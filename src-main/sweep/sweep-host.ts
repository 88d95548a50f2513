// The window's sweeps (src-shared/sweep/contract.ts): one sweep at a time,
// run beside the live session (which it never touches), progress streamed as
// `sweep` events, each case's trace and the result's JSON written to the
// traces folder so a click opens a case's trace and a saved sweep opens again.
import { writeFileAtomicSync } from '../files/atomic-write';
import fs from 'node:fs';
import path from 'node:path';
import type { LabBatch, LabReply, SavedTrace, TraceFileInfo } from '@shared/lab/contract';
import { SWEEP_NAME, type SweepCommand } from '@shared/sweep/contract';
import { sweepToCsv } from '@shared/sweep/csv';
import type { SweepCase, SweepResult } from '@shared/sweep/types';
import { predictCase } from '@shared/model/validate-case';
import { withPredictions } from '@shared/model/sweep-predictions';
import { loadCalibrationOrReference } from '../model/calibration-file';
import { runSweep, sweepStem } from './runner';

export interface SweepHostOptions {
  /** Case traces and saved sweeps go here. (Browser mode's download route serves .ndjson/.pcapng only, so a sweep file carries no download link.) */
  tracesDir: string;
  emit: (batch: LabBatch) => void;
  producer?: string;
}

export class SweepHostError extends Error {
  constructor(
    readonly code: 'BUSY' | 'NO_SWEEP' | 'NOT_FOUND' | 'BAD_SWEEP',
    message: string,
  ) {
    super(message);
    this.name = 'SweepHostError';
  }
}

/** A saved sweep read back: the shape is checked before the window gets it. */
export function parseSavedSweep(text: string): SweepResult {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new SweepHostError('BAD_SWEEP', `not JSON: ${(e as Error).message}`);
  }
  const r = v as Partial<SweepResult>;
  if (
    typeof v !== 'object' ||
    v === null ||
    r.format !== 'relay-lab-sweep' ||
    r.version !== 1 ||
    !Array.isArray(r.cases) ||
    typeof r.spec !== 'object'
  )
    throw new SweepHostError('BAD_SWEEP', 'not a relay-lab sweep (format relay-lab-sweep, version 1)');
  return r as SweepResult;
}

export class SweepHost {
  private running: AbortController | null = null;
  private last: { result: SweepResult; stem: string } | null = null;

  constructor(private readonly opts: SweepHostOptions) {}

  async command(cmd: SweepCommand): Promise<LabReply> {
    try {
      return await this.handle(cmd);
    } catch (e) {
      const code = (e as { code?: unknown }).code;
      return {
        ok: false,
        error: typeof code === 'string' ? code : 'SWEEP_FAILED',
        message: (e as Error).message,
      };
    }
  }

  private async handle(cmd: SweepCommand): Promise<LabReply> {
    switch (cmd.type) {
      case 'sweep': {
        if (this.running) throw new SweepHostError('BUSY', 'a sweep is already running (cancel it first)');
        const abort = new AbortController();
        this.running = abort;
        const stem = sweepStem(new Date());
        try {
          fs.mkdirSync(this.opts.tracesDir, { recursive: true });
          // Every case of the window's sweeps carries the round model's prediction (docs/model.md):
          // this machine's calibration file where `relay-lab calibrate` wrote one, else the reference.
          const calibration = loadCalibrationOrReference();
          const predicted = <T extends SweepCase | undefined>(c: T): T =>
            c && !c.error ? { ...c, predicted: predictCase(cmd.spec, c, calibration) } : c;
          const result = withPredictions(
            await runSweep(cmd.spec, {
              signal: abort.signal,
              traceDir: this.opts.tracesDir,
              traceStem: stem,
              producer: this.opts.producer,
              onProgress: (progress) =>
                this.opts.emit({
                  events: [
                    { type: 'sweep', progress: { ...progress, finished: predicted(progress.finished) } },
                  ],
                }),
            }),
            calibration,
          );
          this.last = { result, stem };
          return { ok: true, sweep: result, sweepFile: this.save('json') };
        } catch (e) {
          const message = (e as Error).message;
          this.opts.emit({
            events: [
              { type: 'sweep', progress: { done: 0, total: 0, current: null, state: 'error', message } },
            ],
          });
          throw e;
        } finally {
          this.running = null;
        }
      }
      case 'cancelSweep':
        this.running?.abort('cancelled');
        return { ok: true };
      case 'saveSweep':
        return { ok: true, sweepFile: this.save(cmd.format) };
      case 'listSweeps':
        return { ok: true, sweeps: this.list() };
      case 'openSweep': {
        const file = path.join(this.opts.tracesDir, cmd.name);
        if (!SWEEP_NAME.test(cmd.name) || !fs.existsSync(file))
          throw new SweepHostError('NOT_FOUND', `no saved sweep '${cmd.name}' in ${this.opts.tracesDir}`);
        const result = parseSavedSweep(await fs.promises.readFile(file, 'utf8'));
        this.last = { result, stem: cmd.name.replace(/\.sweep\.json$/, '') };
        return { ok: true, sweep: result };
      }
    }
  }

  private save(format: 'json' | 'csv'): SavedTrace {
    if (!this.last) throw new SweepHostError('NO_SWEEP', 'no sweep has run or been opened');
    const name = `${this.last.stem}.sweep.${format}`;
    const file = path.join(this.opts.tracesDir, name);
    fs.mkdirSync(this.opts.tracesDir, { recursive: true });
    const text =
      format === 'json' ? JSON.stringify(this.last.result, null, 2) + '\n' : sweepToCsv(this.last.result);
    writeFileAtomicSync(file, text);
    const saved: SavedTrace = {
      name,
      path: file,
      bytes: Buffer.byteLength(text),
      records: this.last.result.cases.length,
    };
    return saved;
  }

  private list(): TraceFileInfo[] {
    let names: string[];
    try {
      names = fs.readdirSync(this.opts.tracesDir);
    } catch {
      return [];
    }
    return names
      .filter((n) => SWEEP_NAME.test(n) && n.endsWith('.json'))
      .flatMap((name) => {
        try {
          const st = fs.statSync(path.join(this.opts.tracesDir, name));
          return st.isFile() ? [{ name, bytes: st.size, modifiedAt: st.mtimeMs }] : [];
        } catch {
          return [];
        }
      })
      .sort((a, b) => b.modifiedAt - a.modifiedAt);
  }

  /** Stops a running sweep (its finished cases are kept in its reply). */
  shutdown(): void {
    this.running?.abort('shutdown');
  }
}
