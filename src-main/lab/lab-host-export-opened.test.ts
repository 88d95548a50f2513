// Export pcapng while a trace is open exports that trace's units (issue 30,
// item 14): the window offers it offline too, and it needs no running session.
import { afterAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TopologySession } from './topology-session';
import { LabHost } from './lab-host';
import { TraceWriter } from './trace/ndjson';
import { sampleEvents, sampleHeader } from './trace/testing/sample-session';
import { readPcapng } from './trace/pcapng-reader';

const dirs: string[] = [];
function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-export-opened-'));
  dirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe('Export pcapng of an opened trace', () => {
  it("writes the opened trace's units to a pcapng beside it, never over another file", async () => {
    const tracesDir = tempDir();
    const events = sampleEvents();
    const writer = TraceWriter.toFile(path.join(tracesDir, 'sample.trace.ndjson'), sampleHeader());
    for (const e of events) if (e.type !== 'end') writer.write(e);
    await writer.close();
    const host = new LabHost(new TopologySession(), {
      tracesDir,
      workDir: tempDir(),
      downloadUrl: (n) => `/traces/${n}`,
    });
    try {
      expect(await host.command({ type: 'openTrace', name: 'sample.trace.ndjson' })).toMatchObject({
        ok: true,
      });
      const units = events.filter((e) => e.type === 'record').length;
      const first = await host.command({ type: 'saveTrace', format: 'pcapng' });
      if (!first.ok) throw new Error(`${first.error}: ${first.message}`);
      expect(first.trace).toMatchObject({
        name: 'sample.pcapng',
        records: units,
        download: '/traces/sample.pcapng',
      });
      expect(readPcapng(new Uint8Array(fs.readFileSync(first.trace.path))).packets.length).toBeGreaterThan(0);
      const again = await host.command({ type: 'saveTrace', format: 'pcapng' });
      expect(again.ok && again.trace.name).toBe('sample-2.pcapng');
    } finally {
      await host.shutdown();
    }
  });
});
