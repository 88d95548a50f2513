// The window's reproductions (issue 12): Record / Save / Open a reproduction
// file, and the built-ins' runs with their pictures. A reproduction runs on
// its own processes and sockets beside the live session, whose rounds are
// paused meanwhile and resumed after (its records, findings and interval are
// kept): nothing of the live session is lost.
import fs from 'node:fs';
import type { LabReply, SavedTrace, ScenarioResult } from '@shared/lab/contract';
import type { SessionSnapshot } from '@shared/lab/state';
import { parseRepro, ReproFormatError, type ReproRunView, type RunPicture } from '@shared/repro';
import { runRepro } from '../../repro/runner';
import { pictureOfTrace, type PreferredUnit } from '../../repro/run-picture';
import type { ReproRecorder } from '../../repro/session-recorder';
import { recordSession } from '../trace/session-recording';
import type { TraceRecorder } from '../trace/recorder';
import { findScenario, scenarioInfos } from '../scenarios/registry';
import { runScenario } from '../scenarios/run-scenario';
import { LabError, type HandlerTable, type TopologyCommand } from './handler';

/** What these handlers need of the lab host (src-main/lab/lab-host.ts). */
export interface ReproHostContext {
  readonly session: {
    command(cmd: TopologyCommand): Promise<LabReply>;
    snapshot(): SessionSnapshot;
  };
  readonly reproRecorder: ReproRecorder;
  /** Runs `work` while topology commands wait. */
  runExclusive<T>(work: () => Promise<T>): Promise<T>;
  /** A log line to the window. */
  emitLog(level: 'info' | 'warn' | 'error', message: string): void;
  /** A path in the traces folder for a new file named `name`. */
  tracePath(name: string): string;
  /** Writes `text` where the person chooses (Electron) or into the traces folder (browser mode). */
  writeFile(suggested: string, text: string): Promise<SavedTrace>;
}

type ReproCommandType = 'runScenario' | 'reproRecord' | 'draftRepro' | 'saveRepro' | 'runRepro';

const stamp = () => new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
const safe = (s: string) => s.replace(/[^A-Za-z0-9_-]+/g, '-').slice(0, 40) || 'repro';

/** Pauses the live rounds around `work` and resumes them after (only if they were running). */
async function besideLive<T>(host: ReproHostContext, work: () => Promise<T>): Promise<T> {
  const snap = host.session.snapshot();
  const pause = snap.running && !snap.roundsPaused;
  if (pause) await host.session.command({ type: 'pauseRounds' });
  try {
    return await work();
  } finally {
    if (pause) await host.session.command({ type: 'resumeRounds' }).catch(() => {});
  }
}

function parseOrFail(text: string) {
  try {
    return parseRepro(text);
  } catch (e) {
    if (e instanceof ReproFormatError) throw new LabError(e.code, e.message);
    throw e;
  }
}

async function pictureOr(
  file: string,
  name: string,
  note: string,
  prefer?: PreferredUnit,
): Promise<RunPicture> {
  if (fs.existsSync(file)) return pictureOfTrace(file, name, prefer);
  return { durationMs: 0, lanes: [], units: [], records: 0, marks: [], rounds: [], note };
}

export const REPRO_HANDLERS: HandlerTable<ReproCommandType, ReproHostContext> = {
  async runScenario(host, cmd) {
    const s = findScenario(cmd.name);
    if (!s)
      throw new LabError(
        'NOT_FOUND',
        `no scenario '${cmd.name}' (known: ${scenarioInfos()
          .map((x) => x.name)
          .join(', ')})`,
      );
    const names = {
      historical: `repro-${s.name}-historical-${stamp()}.trace.ndjson`,
      current: `repro-${s.name}-flodl07-${stamp()}.trace.ndjson`,
    };
    const hints: Partial<Record<'historical' | 'current', PreferredUnit>> = {};
    const result: ScenarioResult = await host.runExclusive(() =>
      besideLive(host, () =>
        runScenario(
          s,
          (phase, message) => host.emitLog('info', `scenario ${s.name} [${phase}]: ${message}`),
          undefined,
          {
            traceFile: (side) => host.tracePath(names[side]),
            decisive: (side, hint) => (hints[side] = hint),
          },
        ),
      ),
    );
    const none = 'this run drives one socket or process directly, not a topology: no trace of it';
    result.pictures = {
      historical: await pictureOr(host.tracePath(names.historical), names.historical, none, hints.historical),
      current: await pictureOr(host.tracePath(names.current), names.current, none, hints.current),
    };
    host.emitLog(
      result.verdict === 'ok' ? 'info' : 'error',
      `scenario ${s.name}: verdict ${result.verdict}${result.error ? ` (${result.error})` : ''}`,
    );
    return { ok: true, scenario: result };
  },

  async reproRecord(host, cmd) {
    if (cmd.on === undefined) return { ok: true, recording: host.reproRecorder.state() };
    return { ok: true, recording: host.reproRecorder.setOn(cmd.on, host.session.snapshot().round) };
  },

  async draftRepro(host) {
    let repro;
    try {
      repro = host.reproRecorder.draft();
    } catch (e) {
      throw new LabError('NO_SESSION', (e as Error).message);
    }
    return { ok: true, text: JSON.stringify(repro, null, 2), recording: host.reproRecorder.state() };
  },

  async saveRepro(host, cmd) {
    const repro = parseOrFail(cmd.text);
    const file = await host.writeFile(`${safe(repro.name ?? 'repro')}-${stamp()}.repro.json`, cmd.text);
    return { ok: true, file };
  },

  async runRepro(host, cmd) {
    const repro = parseOrFail(cmd.text);
    const name = `repro-${safe(repro.name ?? 'file')}-${stamp()}.trace.ndjson`;
    const file = host.tracePath(name);
    const t0 = performance.now();
    let rec: TraceRecorder | null = null;
    const out = await host.runExclusive(() =>
      besideLive(host, async () => {
        host.emitLog('info', `reproduction ${repro.name ?? ''}: replaying ${repro.topology.rounds} round(s)`);
        try {
          return await runRepro(repro, {
            snapLen: 64 * 1024,
            onRoundsStart: (s) => {
              rec = recordSession(s, file, { producer: 'relay-lab repro' });
            },
          });
        } finally {
          await (rec as TraceRecorder | null)?.close().catch(() => {});
        }
      }),
    );
    const view: ReproRunView = {
      name: repro.name ?? name,
      held: out.held,
      verdict: out.report.verdict,
      results: out.results,
      rounds: out.report.rounds.map((r) => ({
        round: r.round,
        verdict: r.verdict,
        consensusSha256: r.consensusSha256,
        mergeOrder: r.mergeOrder,
      })),
      dead: [...out.report.dead].sort((a, b) => a - b),
      picture: await pictureOr(file, name, 'the replay ended before its topology started: no trace'),
      ms: Math.round(performance.now() - t0),
    };
    const failed = out.results.filter((x) => !x.ok).map((x) => x.name);
    host.emitLog(
      out.held ? 'info' : 'error',
      `reproduction ${view.name}: ${out.held ? `all ${out.results.length} expectations hold` : `failed: ${failed.join(', ')}`}`,
    );
    return { ok: true, run: view };
  },
};
