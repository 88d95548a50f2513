// The window's lab with taps: the LabHost (the lab's own topology, its
// recording, an opened trace) plus live taps on a cluster the lab did not
// start (src-main/capture/tap-feed.ts) and captures opened as traces. The
// taps are a source of their own: while the window shows them, the lab's
// topology keeps running unseen (its batches are held back, its recording
// goes on) and "Back to the lab" (closeTrace) brings it back with a
// resetting catch-up, exactly as closing a trace does. Electron and browser
// mode construct this in front of their LabHost; the host itself is
// unchanged and never sees a tap command.
import fs from 'node:fs';
import path from 'node:path';
import type {
  AnyCommand,
  CaptureSummary,
  CommandOf,
  LabApi,
  LabBatch,
  LabEvent,
  LabView,
  ReplyOf,
  TapCommand,
  TapCommandSpecs,
} from '@shared/lab/contract';
import { CAPTURE_NAME } from '@shared/lab/validate';
import { saltFromHex } from '@shared/wire/salt';
import { nodeMac } from '../crypto/node-mac';
import { TapFeed } from '../capture/tap-feed';
import { importCapture, writeImportTrace } from '../capture/import-capture';
import { DEFAULT_RECENT_RECORDS, type LabHost } from './lab-host';
import { dispatch, LabError, type HandlerTable } from './commands/handler';

/** The largest capture the window imports (it is read whole; browser mode's upload is capped below this). */
export const MAX_CAPTURE_BYTES = 1024 * 1024 * 1024;
const CAPTURE_SNAP_LEN = 64 * 1024;

const TAP_COMMAND_TYPES: ReadonlySet<string> = new Set<keyof TapCommandSpecs>([
  'startTap',
  'stopTap',
  'listTaps',
  'showTaps',
  'openCapture',
]);
export function isTapCommand(cmd: AnyCommand): cmd is TapCommand {
  return TAP_COMMAND_TYPES.has(cmd.type);
}

export interface TapRouterOptions {
  /** Where `openCapture {name}` looks (the traces folder, where browser mode's uploads land). */
  tracesDir: string;
  /** Where imported captures are written as traces before they open. */
  workDir: string;
  /** Electron: an open dialog for a capture file (`openCapture` without a name). */
  chooseCapturePath?: () => Promise<string | null>;
}

export class TapRouter implements LabApi {
  readonly feed = new TapFeed();
  private showing = false;
  private readonly listeners = new Set<(b: LabBatch) => void>();

  constructor(
    readonly lab: LabHost,
    private readonly o: TapRouterOptions,
  ) {
    lab.subscribe((b) => {
      if (!this.showing) this.emit(b);
    });
    this.feed.subscribe((b) => {
      if (this.showing) this.emit(b);
    });
  }

  get view(): LabView {
    return this.showing ? { kind: 'tap', taps: this.feed.list().length } : this.lab.view;
  }

  subscribe(listener: (batch: LabBatch) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(b: LabBatch): void {
    for (const l of this.listeners) l(b);
  }

  async command<C extends AnyCommand>(cmd: C): Promise<ReplyOf<C['type']>> {
    if (isTapCommand(cmd)) {
      try {
        return (await dispatch(TAP_HANDLERS, this, cmd)) as ReplyOf<C['type']>;
      } catch (e) {
        const code = (e as { code?: unknown }).code;
        return {
          ok: false,
          error: typeof code === 'string' ? code : 'TAP_FAILED',
          message: e instanceof Error ? e.message : String(e),
        } as ReplyOf<C['type']>;
      }
    }
    // Quitting stops the lab's topology whatever the window shows; everything else goes to the lab when it is shown.
    if (!this.showing || cmd.type === 'stop') return this.lab.command(cmd);
    return (await this.whileShowingTaps(cmd)) as ReplyOf<C['type']>;
  }

  private async whileShowingTaps(cmd: Exclude<AnyCommand, TapCommand>): Promise<ReplyOf<AnyCommand['type']>> {
    switch (cmd.type) {
      case 'recentRecords':
        return {
          ok: true,
          records: this.feed.recentRecords(cmd.limit ?? DEFAULT_RECENT_RECORDS),
          snapshot: this.feed.snapshot(),
          view: this.view,
          history: this.feed.recentHistory(),
        };
      case 'closeTrace':
        // "Back to the lab": the lab host sends the live catch-up (or closes a trace left open under the taps).
        this.showing = false;
        return this.lab.command(cmd);
      case 'openTrace': {
        this.showing = false;
        const reply = await this.lab.command(cmd);
        if (!reply.ok) this.showing = true;
        return reply;
      }
      case 'saveTrace':
        return {
          ok: false,
          error: 'TAP_VIEW',
          message: "Save trace saves the lab's own session; record a tap with 'relay-lab tap --trace FILE'",
        };
      case 'listTraces':
      case 'seekTrace':
        return this.lab.command(cmd);
      default:
        if (cmd.type.endsWith('Sweep') || cmd.type === 'sweep' || cmd.type === 'listSweeps')
          return this.lab.command(cmd);
        return this.feed.command(cmd);
    }
  }

  /** Switches the window to the taps: the view, a resetting snapshot, the recent rounds and records. */
  showTaps(): LabView {
    this.showing = true;
    this.feed.flush();
    const events: LabEvent[] = [
      { type: 'view', view: this.view },
      { type: 'snapshot', snapshot: this.feed.snapshot(), reset: true },
      ...this.feed.recentHistory(),
    ];
    const records = this.feed.recentRecords(DEFAULT_RECENT_RECORDS);
    if (records.length) events.push({ type: 'records', records, droppedBefore: 0 });
    this.emit({ events });
    return this.view;
  }

  /** Imports a pcap/pcapng and opens it as a trace (the lab host's replay), gaps named. */
  async openCapture(cmd: CommandOf<'openCapture'>): Promise<ReplyOf<'openCapture'>> {
    const file = await this.captureFile(cmd.name);
    const size = fs.statSync(file).size;
    if (size > MAX_CAPTURE_BYTES)
      throw new LabError(
        'TOO_LARGE',
        `${path.basename(file)} is ${size} bytes; the window imports up to ${MAX_CAPTURE_BYTES}`,
      );
    const salt = saltFromHex(cmd.saltHex);
    let result;
    try {
      result = importCapture(new Uint8Array(await fs.promises.readFile(file)), {
        mac: nodeMac(salt),
        snapLen: CAPTURE_SNAP_LEN,
      });
    } catch (e) {
      const code = (e as { code?: unknown }).code;
      throw new LabError(
        typeof code === 'string' ? code : 'BAD_CAPTURE',
        `${path.basename(file)}: ${(e as Error).message}`,
      );
    }
    if (result.streams.length === 0)
      throw new LabError(
        'NO_FLODL_STREAMS',
        `${path.basename(file)}: ${result.packets} packets, ${result.tcpConnections} TCP connections, none carrying a flodl unit`,
      );
    fs.mkdirSync(this.o.workDir, { recursive: true });
    const trace = path.join(this.o.workDir, `${path.basename(file).replace(/[^\w.-]/g, '_')}.trace.ndjson`);
    const units = await writeImportTrace(result, salt, trace, CAPTURE_SNAP_LEN);
    this.showing = false;
    await this.lab.openFile(trace);
    const capture: CaptureSummary = {
      name: path.basename(file),
      streams: result.streams.length,
      units,
      undecodable: result.streams.reduce((a, s) => a + s.undecodable, 0),
      gapBytes: result.streams.reduce((a, s) => a + s.gapBytes, 0),
    };
    return { ok: true, view: this.view, capture };
  }

  private async captureFile(name: string | undefined): Promise<string> {
    if (name === undefined) {
      if (!this.o.chooseCapturePath)
        throw new LabError('NOT_SUPPORTED', 'name a capture of the traces folder (upload it first)');
      const picked = await this.o.chooseCapturePath();
      if (!picked) throw new LabError('CANCELLED', 'the open was cancelled');
      return picked;
    }
    if (!CAPTURE_NAME.test(name)) throw new LabError('NOT_FOUND', `'${name}' is not a capture file name`);
    const file = path.join(this.o.tracesDir, name);
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(file);
    } catch {
      throw new LabError('NOT_FOUND', `no capture '${name}' in ${this.o.tracesDir}`);
    }
    // Only a file of the folder itself: a link there could name any file this user can read.
    if (!stat.isFile()) throw new LabError('NOT_FOUND', `'${name}' is not a file (links are not followed)`);
    return file;
  }

  /** Ends the taps now (the process is quitting). */
  async shutdown(): Promise<void> {
    await this.feed.close();
  }
}

const TAP_HANDLERS: HandlerTable<keyof TapCommandSpecs, TapRouter> = {
  async startTap(r, cmd) {
    await r.feed.start(cmd.tap);
    return { ok: true, taps: r.feed.list(), view: r.showTaps() };
  },
  async stopTap(r, cmd) {
    await r.feed.stop(cmd.id);
    return { ok: true, taps: r.feed.list() };
  },
  listTaps: async (r) => ({ ok: true, taps: r.feed.list() }),
  showTaps: async (r) => ({ ok: true, view: r.showTaps() }),
  openCapture: (r, cmd) => r.openCapture(cmd),
};
