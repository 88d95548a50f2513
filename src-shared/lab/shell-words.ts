// A command line split into words as a POSIX shell splits it, for running the
// command without a shell (an external relay, `--relay-cmd HOST=COMMAND`):
// blanks separate words; single quotes keep everything literally; double
// quotes keep everything but \" \\ \$ \` and a backslash-newline; a backslash
// outside quotes keeps the next character. Nothing is expanded, so what a
// shell would expand or interpret ($VAR, `cmd`, pipes, redirections, ;, &)
// is refused by name unless quoted: the command would silently mean
// something else here than in a terminal.

export class ShellWordsError extends Error {
  override readonly name = 'ShellWordsError';
  readonly code = 'BAD_COMMAND';
}

const SHELL_SYNTAX = new Set(['|', '&', ';', '<', '>', '(', ')', '$', '`']);

export function shellWords(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let i = 0;
  const n = line.length;
  while (i < n) {
    const c = line[i];
    if (c === ' ' || c === '\t' || c === '\n') {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
      i++;
    } else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new ShellWordsError(`unterminated single quote at character ${i + 1}`);
      word += line.slice(i + 1, end);
      inWord = true;
      i = end + 1;
    } else if (c === '"') {
      inWord = true;
      i++;
      for (;;) {
        if (i >= n) throw new ShellWordsError('unterminated double quote');
        const d = line[i];
        if (d === '"') {
          i++;
          break;
        }
        if (d === '\\' && i + 1 < n && '"\\$`\n'.includes(line[i + 1])) {
          if (line[i + 1] !== '\n') word += line[i + 1];
          i += 2;
          continue;
        }
        if (d === '$' || d === '`')
          throw new ShellWordsError(
            `'${d}' inside double quotes would be expanded by a shell; the command runs without one (use single quotes)`,
          );
        word += d;
        i++;
      }
    } else if (c === '\\') {
      if (i + 1 >= n) throw new ShellWordsError('a trailing backslash escapes nothing');
      if (line[i + 1] !== '\n') {
        word += line[i + 1];
        inWord = true;
      }
      i += 2;
    } else if (SHELL_SYNTAX.has(c)) {
      throw new ShellWordsError(
        `'${c}' at character ${i + 1} is shell syntax; the command runs without a shell (quote it to pass it literally)`,
      );
    } else {
      word += c;
      inWord = true;
      i++;
    }
  }
  if (inWord) words.push(word);
  return words;
}
