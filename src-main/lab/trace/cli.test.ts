import { afterEach, describe, expect, it, vi } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '../../cli/args';
import { traceCommand } from './cli';
import { eventCountsText } from './info-text';
import { TraceWriter } from './ndjson';
import { readPcapng } from './pcapng-reader';
import { sampleEvents, sampleHeader, sampleUnits } from './testing/sample-session';

async function sampleTraceFile(): Promise<{ dir: string; path: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'relay-lab-cli-'));
  const path = join(dir, 'session.trace.ndjson');
  const w = TraceWriter.toFile(path, sampleHeader());
  for (const e of sampleEvents()) if (e.type !== 'end') w.write(e);
  await w.close();
  return { dir, path };
}

/** Runs the command, returning its exit code and what it printed. */
async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((s) => ((out += String(s)), true));
  vi.spyOn(process.stderr, 'write').mockImplementation((s) => ((err += String(s)), true));
  try {
    return { code: await traceCommand.run(argv), out, err };
  } finally {
    vi.restoreAllMocks();
  }
}

afterEach(() => vi.restoreAllMocks());

describe('relay-lab trace', () => {
  it('info --json summarises a trace', async () => {
    const { path } = await sampleTraceFile();
    const { code, out } = await run(['info', path, '--json']);
    expect(code).toBe(0);
    const report = JSON.parse(out);
    const units = sampleUnits();
    expect(report).toMatchObject({
      version: 1,
      saltHex: sampleHeader().saltHex,
      links: 4,
      complete: true,
      truncatedTail: false,
    });
    expect(report.events.record).toBe(units.length);
    // Every link the units name, with its count (a link declared late, a remote leg, is listed too).
    const perLink: Record<string, number> = {};
    for (const u of units) perLink[u.link] = (perLink[u.link] ?? 0) + 1;
    expect(report.unitsPerLink).toEqual(perLink);
    expect(report.gaps).toBe(0);
    expect(report.bytesOnWire).toBe(units.reduce((n, u) => n + u.bytes.length, 0));
    expect(report.bytesCaptured).toBe(units.reduce((n, u) => n + (u.captured ?? u.bytes.length), 0));
  });

  it("info in words labels each event count, apart from the header's links", async () => {
    const { path } = await sampleTraceFile();
    const { code, out } = await run(['info', path]);
    expect(code).toBe(0);
    const [first, second, third] = out.split('\n');
    expect(third).toMatch(/^ {2}units per link: h0\.r0\.control \d+, h0\.r0\.data \d+/);
    expect(first).toMatch(/, 4 links, /);
    // Was "12 record, 3 links, 1 end": a count of counter samples read as a second number of links.
    expect(second).toMatch(/^ {2}events: \d+ units?(, |$)/);
    expect(second).not.toMatch(/\d+ (record|links|end)\b/);
    expect(eventCountsText({ record: 1212, links: 122, round: 10, end: 1 })).toBe(
      '1212 units, 10 round reports, 122 link-counter samples',
    );
    expect(eventCountsText({ record: 1, round: 1 })).toBe('1 unit, 1 round report');
  });

  it('export writes a pcapng next to the trace', async () => {
    const { dir, path } = await sampleTraceFile();
    const { code, out } = await run(['export', path, '--json']);
    expect(code).toBe(0);
    const result = JSON.parse(out);
    expect(result.pcapng).toBe(join(dir, 'session.pcapng'));
    const pcap = readPcapng(Uint8Array.from(readFileSync(result.pcapng)));
    expect(pcap.packets.length).toBe(result.packets);
    expect(result.units).toBe(sampleUnits().length);
    const small = await run([
      'export',
      path,
      '-o',
      join(dir, 'small.pcapng'),
      '--mss',
      '100',
      '--no-comments',
    ]);
    expect(small.code).toBe(0);
    const smallPcap = readPcapng(Uint8Array.from(readFileSync(join(dir, 'small.pcapng'))));
    expect(smallPcap.packets.length).toBeGreaterThan(pcap.packets.length);
    expect(smallPcap.packets.every((p) => p.comments.length === 0)).toBe(true);
  });

  it('rejects a bad trace with its code (exit 1) and leaves no half-written capture', async () => {
    const { dir, path } = await sampleTraceFile();
    const lines = readFileSync(path, 'utf8').split('\n');
    lines[3] = '{"type":"record","t":1,';
    const bad = join(dir, 'bad.ndjson');
    writeFileSync(bad, lines.join('\n'));
    const r = await run(['export', bad, '-o', join(dir, 'bad.pcapng')]);
    expect(r.code).toBe(1);
    expect(r.err).toContain('BAD_JSON');
    expect(r.err).toContain('line 4');
    expect(existsSync(join(dir, 'bad.pcapng'))).toBe(false);
    expect((await run(['info', join(dir, 'missing.ndjson')])).code).toBe(1);
    const unwritable = await run(['export', path, '-o', join(dir, 'no-such-dir', 'x.pcapng')]);
    expect(unwritable.code).toBe(1);
    expect(unwritable.err).toContain('does not exist');
  });

  it('usage errors throw UsageError (exit 2 from the dispatcher)', async () => {
    await expect(run(['explode', 'x'])).rejects.toBeInstanceOf(UsageError);
    await expect(run(['export'])).rejects.toBeInstanceOf(UsageError);
    const { path } = await sampleTraceFile();
    await expect(run(['export', path, '--mss', '70000'])).rejects.toBeInstanceOf(UsageError);
    expect((await run(['--help'])).code).toBe(0);
  });
});
