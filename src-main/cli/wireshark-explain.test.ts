// wireshark/relay_lab.lua takes its field descriptions from the one
// explanations table: its generated block is what the table renders, every
// ProtoField passes its description, and tshark (where installed) shows them.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { FIELD_EXPLANATIONS, explanationFor } from '@shared/explain/field-explanations';
import { LUA_BEGIN, LUA_END, renderLuaExplanations } from '@shared/explain/wireshark-lua';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const LUA = path.join(root, 'wireshark/relay_lab.lua');
const lua = readFileSync(LUA, 'utf8');
const hasTshark = spawnSync('tshark', ['--version']).status === 0;

describe('relay_lab.lua field descriptions', () => {
  it('carry the block the table renders (node scripts/gen-wireshark-explain.mjs rewrites it)', () => {
    const block = lua.slice(lua.indexOf(LUA_BEGIN), lua.indexOf(LUA_END) + LUA_END.length);
    expect(block).toBe(renderLuaExplanations());
  });

  it('every ProtoField is explained by the table and passes its description', () => {
    const described = new Set(FIELD_EXPLANATIONS.flatMap((x) => x.wireshark ?? []));
    const fields = [...lua.matchAll(/(?:ProtoField\.\w+|string_field)\("([^"]+)"[^\n]*/g)];
    expect(fields.length).toBeGreaterThan(40);
    for (const [line, abbr] of fields) {
      expect(described, abbr).toContain(abbr);
      expect(line.includes(`explain("${abbr}")`) || line.includes(`string_field("${abbr}"`), abbr).toBe(true);
    }
  });

  it.runIf(hasTshark)('tshark shows the table text as each field description', () => {
    const home = mkdtempSync(path.join(tmpdir(), 'relaylab-ws-'));
    try {
      const plugins = path.join(home, '.local/lib/wireshark/plugins');
      mkdirSync(plugins, { recursive: true });
      copyFileSync(LUA, path.join(plugins, 'relay_lab.lua'));
      // Only the plugin's rows: the whole field list is tens of megabytes.
      const r = spawnSync('sh', ['-c', 'tshark -G fields | grep relaylab'], {
        env: { ...process.env, HOME: home },
        encoding: 'utf8',
      });
      expect(r.error).toBeUndefined();
      const blurbs = new Map(
        r.stdout
          .split('\n')
          .map((l) => l.split('\t'))
          .filter((c) => c[0] === 'F' && c[2]?.startsWith('relaylab.'))
          .map((c) => [c[2], c[7] ?? ''] as const),
      );
      const kind = explanationFor('mux.kind')!;
      expect(blurbs.get('relaylab.mux.kind')).toContain(kind.meaning);
      expect(blurbs.get('relaylab.mux.tag')).toContain('header bytes 0..17');
      const declared = FIELD_EXPLANATIONS.flatMap((x) => x.wireshark ?? []);
      for (const abbr of declared) expect(blurbs.get(abbr)?.length ?? 0, abbr).toBeGreaterThan(20);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
