// An imported capture's summary comes from the capture (issue 30, item 10):
// a 2 x 2 run of 3 rounds with a 4 KiB bf16 model, exported to a pcapng and
// imported, opens as 4 KiB bf16 with 3 rounds done and its units numbered
// by round (the ladder draws them), not as the lab's default 4 MiB f32 with
// 0 rounds.
import { afterAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { saltFromHex } from '@shared/wire/salt';
import { tensorFromValues, encodeRoundFrame } from '@shared/wire/round-frame';
import { DTYPE_BF16, DTYPE_F32 } from '@shared/wire/constants';
import { nodeMac } from '../crypto/node-mac';
import { exportTraceFileToPcapng } from '../lab/trace/pcapng';
import { TraceReplay } from '../lab/trace/replay';
import { importCapture, writeImportTrace } from './import-capture';
import { modelOfRoundFrame } from './capture-rounds';

const SALT = '7e57ca97000000000000000000000002';
const root = path.resolve(__dirname, '..', '..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-capture-summary-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("an imported capture's summary", () => {
  it('holds its model size, dtype, rounds and ladder, read from its units', { timeout: 90_000 }, async () => {
    const trace = path.join(dir, 'run.trace.ndjson');
    const run = spawnSync(
      process.execPath,
      [
        path.join(root, 'bin', 'relay-lab.mjs'),
        'run',
        '--hosts',
        '2',
        '--ranks-per-host',
        '2',
        '--rounds',
        '3',
        '--model-bytes',
        '4KiB',
        '--dtype',
        'bf16',
        '--salt',
        SALT,
        '--trace',
        trace,
      ],
      { cwd: root, encoding: 'utf8', timeout: 60_000 },
    );
    expect(run.status, run.stderr).toBe(0);
    const pcap = path.join(dir, 'run.pcapng');
    await exportTraceFileToPcapng(trace, pcap);

    const salt = saltFromHex(SALT);
    const imported = importCapture(new Uint8Array(fs.readFileSync(pcap)), {
      mac: nodeMac(salt),
      snapLen: 65_536,
    });
    const out = path.join(dir, 'imported.trace.ndjson');
    await writeImportTrace(imported, salt, out, 65_536);
    const replay = await TraceReplay.fromFile(out);
    const snap = replay.snapshotAt(replay.duration);
    expect(snap.config.ranksPerHost).toEqual([2, 2]);
    expect(snap.config.modelBytes).toBe(4096);
    expect(snap.config.dtype).toBe('bf16');
    expect(snap.roundsCompleted).toBe(3);
    expect(snap.round).toBe(3);

    // Every HostFrame and Broadcast names its round: 0, 1, 2 for each host.
    const events = replay.labEventsUntil(replay.duration);
    const records = events.flatMap((e) => (e.type === 'records' ? e.records : []));
    const hostFrames = records.filter((r) => r.kind === 'HostFrame');
    expect(hostFrames.map((r) => `${r.host}:${r.round}`).sort()).toEqual([
      '0:0',
      '0:1',
      '0:2',
      '1:0',
      '1:1',
      '1:2',
    ]);
    expect(records.filter((r) => r.kind === 'Broadcast').every((r) => r.round !== undefined)).toBe(true);
    const reports = events.flatMap((e) => (e.type === 'round' ? [e.report] : []));
    expect(reports.map((r) => r.round)).toEqual([0, 1, 2]);
    expect(reports[0]!.accepted).toEqual([0, 1, 2, 3]);
    expect(reports[0]!.verdict).toBe('unchecked');
  });

  it('reads a model from a RoundFrame the snap length cut', () => {
    const mac = nodeMac(saltFromHex(SALT));
    const frame = encodeRoundFrame(
      {
        roundKind: 0,
        weight: 1,
        tensors: [
          tensorFromValues(DTYPE_F32, [64, 64], new Float32Array(4096)),
          tensorFromValues(DTYPE_F32, [1000], new Float32Array(1000)),
        ],
      },
      mac,
    );
    const unit = new Uint8Array(4 + frame.length);
    new DataView(unit.buffer).setUint32(0, frame.length, true);
    unit.set(frame, 4);
    expect(modelOfRoundFrame(unit, unit.length)).toEqual({ elements: 5096, dtype: 'f32' });
    // Cut inside the first tensor's data: the second tensor's count comes from the unit's length.
    expect(modelOfRoundFrame(unit.subarray(0, 200), unit.length)).toEqual({ elements: 5096, dtype: 'f32' });
    const bf = encodeRoundFrame(
      { roundKind: 0, weight: 1, tensors: [tensorFromValues(DTYPE_BF16, [10], new Float32Array(10))] },
      mac,
    );
    const bfUnit = new Uint8Array(4 + bf.length);
    bfUnit.set(bf, 4);
    expect(modelOfRoundFrame(bfUnit, bfUnit.length)).toEqual({ elements: 10, dtype: 'bf16' });
    expect(modelOfRoundFrame(new Uint8Array(10), 10)).toBeNull();
  });
});
