// Writes the field descriptions of wireshark/relay_lab.lua from the one
// explanations table (src-shared/explain/wireshark-lua.ts). Run after editing
// the table: node scripts/gen-wireshark-explain.mjs
import { build } from 'esbuild';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = await build({
  entryPoints: [path.join(root, 'src-shared/explain/wireshark-lua.ts')],
  bundle: true,
  format: 'esm',
  platform: 'neutral',
  write: false,
});
const mod = await import(
  `data:text/javascript;base64,${Buffer.from(out.outputFiles[0].text).toString('base64')}`
);
const file = path.join(root, 'wireshark/relay_lab.lua');
const before = readFileSync(file, 'utf8');
const after = mod.replaceLuaBlock(before, mod.renderLuaExplanations());
if (after !== before) writeFileSync(file, after);
console.log(after === before ? 'relay_lab.lua: up to date' : 'relay_lab.lua: field descriptions rewritten');
