import { describe, expect, it } from 'vitest';
import { shellWords } from './shell-words';

describe('shellWords (POSIX word splitting, no expansion)', () => {
  it.each([
    ['npx relay-lab relay --from-env', ['npx', 'relay-lab', 'relay', '--from-env']],
    ['  a \t b\n c  ', ['a', 'b', 'c']],
    ["'/opt/my flodl/relay' --x", ['/opt/my flodl/relay', '--x']],
    ['"a b" "c\\"d" "e\\\\f" "g\\h"', ['a b', 'c"d', 'e\\f', 'g\\h']],
    ['a\'b\'"c"d', ['abcd']],
    ["'' x", ['', 'x']],
    ['a\\ b c\\\\d', ['a b', 'c\\d']],
    ["'$HOME' 'a|b' \"x;y\" \\$z", ['$HOME', 'a|b', 'x;y', '$z']],
    ['', []],
    ['a\\\nb', ['ab']],
  ])('%j', (line, words) => {
    expect(shellWords(line)).toEqual(words);
  });

  it.each([
    ["'open", /unterminated single quote/],
    ['"open', /unterminated double quote/],
    ['end\\', /trailing backslash/],
    ['relay | tee log', /'\|' at character 7 is shell syntax/],
    ['relay > log', /'>' .* shell syntax/],
    ['a; b', /';'/],
    ['a && b', /'&'/],
    ['$RELAY', /'\$'/],
    ['"$RELAY"', /inside double quotes would be expanded/],
    ['`which relay`', /'`'/],
  ])('%j is a named ShellWordsError', (line, re) => {
    expect(() => shellWords(line)).toThrow(re);
  });
});
