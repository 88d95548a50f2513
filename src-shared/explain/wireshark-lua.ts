// The Wireshark dissector's field descriptions, rendered from the one
// explanations table as a Lua block that wireshark/relay_lab.lua carries
// between markers. scripts/gen-wireshark-explain.mjs writes it; a test fails
// when the file's block is not what this renders.
import { FIELD_EXPLANATIONS } from './field-explanations';

export const LUA_BEGIN =
  '-- BEGIN GENERATED field descriptions (src-shared/explain; run node scripts/gen-wireshark-explain.mjs)';
export const LUA_END = '-- END GENERATED field descriptions';

const luaString = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, ' ')}"`;

/** The block: `local EXPLAIN = { ["relaylab.mux.kind"] = "...", ... }` between the markers. */
export function renderLuaExplanations(): string {
  const rows: string[] = [];
  for (const x of FIELD_EXPLANATIONS)
    for (const abbr of x.wireshark ?? [])
      rows.push(
        `  [${luaString(abbr)}] = ${luaString(`${x.meaning} flodl: ${x.flodl} (${x.wire}; Relay Lab filter ${x.key})`)},`,
      );
  return [LUA_BEGIN, 'local EXPLAIN = {', ...rows, '}', LUA_END].join('\n');
}

/** `text` with its generated block replaced by `block` (an error if the markers are missing). */
export function replaceLuaBlock(text: string, block: string): string {
  const a = text.indexOf(LUA_BEGIN);
  const b = text.indexOf(LUA_END);
  if (a < 0 || b < a) throw new Error('relay_lab.lua: generated-block markers not found');
  return text.slice(0, a) + block + text.slice(b + LUA_END.length);
}
