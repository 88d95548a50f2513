// The control message index table as a session setting (issue 16 item 9), end
// to end: `relay-lab run --index-table v2-late` runs real rank processes whose
// heartbeats go out at index 5 (v2-late's Heartbeat, v2's has 4) and that the
// coordinator reads with the same table; the trace records the table, and a
// reader decodes the traced control frames with it. A trace round trip keeps
// the table, and a trace from before the setting reads as v2.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeControlFrame } from '@shared/wire/control-frame';
import { decodeControlMsg, decodeTimingMsg } from '@shared/wire/control-msgs';
import { MSG_KIND_CONTROL, MSG_KIND_TIMING } from '@shared/wire/control-frame';
import { decodeLenFrame } from '@shared/wire/len-frame';
import { dissect } from '@shared/wire/dissect';
import { saltFromHex } from '@shared/wire/salt';
import { DEFAULT_TOPOLOGY } from '@shared/lab/topology';
import { nodeMac } from '../../crypto/node-mac';
import { decodeHeaderLine, encodeHeaderLine } from './ndjson-codec';
import { loadTraceFile } from './ndjson';
import { TraceReplay } from './replay';
import type { TraceHeader } from './format';
import { TraceError } from './errors';
import { parseRepro } from '@shared/repro';
import { reproConfig } from '../../repro/runner';
import { relayLab } from '../../cli/testing/relay-lab-cli';

const cli = relayLab;

/** Every dissected field name and value, flattened (to find the decoded message). */
function flatFields(fields: { name: string; value: string; children?: unknown[] }[]): string[] {
  return fields.flatMap((f) => [
    `${f.name}=${f.value}`,
    ...flatFields((f.children ?? []) as { name: string; value: string; children?: unknown[] }[]),
  ]);
}

describe('control index table v2-late on real processes', () => {
  it(
    'run --index-table v2-late: heartbeats at index 5 read by the coordinator, the trace decodes with the table',
    { timeout: 180_000 },
    async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-index-table-'));
      const trace = path.join(dir, 'late.ndjson');
      try {
        const r = await cli([
          'run',
          '--topology',
          '2,1',
          '--model-bytes',
          '4096',
          '--rounds',
          '3',
          '--index-table',
          'v2-late',
          '--trace',
          trace,
          '--json',
        ]);
        expect({ code: r.code, err: r.code === 0 ? '' : r.err }).toEqual({ code: 0, err: '' });
        const report = JSON.parse(r.out) as { verdict: string; roundsCompleted: number; dead: number[] };
        expect(report).toMatchObject({ verdict: 'ok', roundsCompleted: 3, dead: [] });

        const loaded = await loadTraceFile(trace);
        expect(loaded.header.config.controlIndexTable).toBe('v2-late');
        // The window's view of the reopened trace carries the table (the inspector dissects with it).
        const replay = new TraceReplay(loaded);
        expect(replay.snapshotAt(replay.duration).config.controlIndexTable).toBe('v2-late');

        const mac = nodeMac(saltFromHex(loaded.header.saltHex));
        const timings: number[] = [];
        const controls: string[] = [];
        // The ranks' own legs (rank -> relay, relay -> rank): whole len-framed ControlFrames.
        for (const e of loaded.events) {
          if (e.type !== 'record' || e.record.layer !== 'lenframe' || !e.record.link.endsWith('.control'))
            continue;
          if (e.bytes.length < e.record.length) continue;
          const f = decodeControlFrame(decodeLenFrame(e.bytes), mac, { version: 2 });
          if (f.msgKind === MSG_KIND_TIMING) {
            // Every timing message decodes under the session's table.
            const m = decodeTimingMsg(f.payload, { indexTable: 'v2-late' });
            if (m.type !== 'Heartbeat') continue;
            timings.push(f.payload[0]);
            // Under the v2 table the same bytes are not a Heartbeat: the setting is what decodes them.
            let v2: string;
            try {
              v2 = decodeTimingMsg(f.payload).type;
            } catch (err) {
              v2 = (err as Error).message;
            }
            expect(v2).not.toBe('Heartbeat');
          } else if (f.msgKind === MSG_KIND_CONTROL) {
            controls.push(decodeControlMsg(f.payload, { indexTable: 'v2-late' }).type);
          }
        }
        expect(timings.length).toBeGreaterThan(0);
        expect(new Set(timings)).toEqual(new Set([5]));
        expect(controls).toContain('SyncNow');
        // Heartbeats went out at v2-late's index 5 (v2's is 4).
        // The coordinator read them with the same table: its records name the heartbeats.
        const coordinatorSaw = loaded.events.filter(
          (e) => e.type === 'record' && /^Timing Heartbeat from rank/.test(e.record.summary),
        );
        expect(coordinatorSaw.length).toBeGreaterThan(0);
        expect(
          loaded.events.filter((e) => e.type === 'record' && /rejected ControlFrame/.test(e.record.summary)),
        ).toEqual([]);
        // The dissector with the trace's table names the message; the inspector does the same.
        const hb = loaded.events.find(
          (e) =>
            e.type === 'record' &&
            e.record.layer === 'lenframe' &&
            e.record.link.endsWith('.control') &&
            e.record.dir === 'up' &&
            e.bytes.length === e.record.length &&
            decodeControlFrame(decodeLenFrame(e.bytes), mac, { version: 2 }).payload[0] === 5,
        );
        expect(hb && hb.type === 'record').toBe(true);
        if (hb && hb.type === 'record') {
          const d = dissect('lenframe', hb.bytes, {
            mac,
            indexTable: loaded.header.config.controlIndexTable,
          });
          expect(d.verdict).toBe('ok');
          expect(flatFields(d.fields).join('\n')).toMatch(/Heartbeat/);
        }
        // trace info names the table.
        const info = await cli(['trace', 'info', trace, '--json']);
        expect(JSON.parse(info.out)).toMatchObject({ controlIndexTable: 'v2-late' });
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  it(
    'a bad --index-table is a usage error naming the flag; nothing starts',
    { timeout: 60_000 },
    async () => {
      const r = await cli(['run', '--topology', '1', '--rounds', '1', '--index-table', 'v9', '--json']);
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/BAD_CONFIG \(--index-table\).*controlIndexTable must be one of v2, v2-late/);
    },
  );
});

describe('trace header: the index table round trip', () => {
  const header: TraceHeader = {
    format: 'relay-lab-trace',
    version: 1,
    startedAt: 1,
    saltHex: '00'.repeat(16),
    config: { ...DEFAULT_TOPOLOGY, controlIndexTable: 'v2-late' },
    links: [],
  };

  it('keeps v2-late through write and read', () => {
    const back = decodeHeaderLine(encodeHeaderLine(header), 1);
    expect(back.config.controlIndexTable).toBe('v2-late');
  });

  it('a trace written before the setting reads as v2', () => {
    const { controlIndexTable: _, ...old } = header.config;
    const back = decodeHeaderLine(JSON.stringify({ ...header, config: old }), 1);
    expect(back.config.controlIndexTable).toBe('v2');
  });

  it('an unknown table is a named error naming the field', () => {
    const bad = JSON.stringify({ ...header, config: { ...header.config, controlIndexTable: 'v3' } });
    expect(() => decodeHeaderLine(bad, 1)).toThrow(TraceError);
    expect(() => decodeHeaderLine(bad, 1)).toThrow(
      /header\.config\.controlIndexTable must be one of v2, v2-late/,
    );
  });
});

describe('reproduction files carry the table to the replay', () => {
  const file = (topology: Record<string, unknown>) =>
    JSON.stringify({
      format: 'relay-lab-repro',
      version: 1,
      topology: { ranksPerHost: [2], modelBytes: 1024, seed: 1, rounds: 2, ...topology },
    });
  it('v2-late replays with v2-late; an older file without the field replays with v2', () => {
    expect(reproConfig(parseRepro(file({ controlIndexTable: 'v2-late' }))).controlIndexTable).toBe('v2-late');
    expect(reproConfig(parseRepro(file({}))).controlIndexTable).toBe('v2');
  });
});
