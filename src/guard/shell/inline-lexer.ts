/**
 * Reading inline interpreter code without running it: its string literals (quotes, escapes,
 * interpolation, python prefixes and triple quotes, perl/ruby/php backticks), a copy of the code
 * with the literals blanked so call names are searched outside strings, and the literal arguments
 * of a call.
 */

export type Family = 'python' | 'node' | 'perl' | 'ruby' | 'php' | 'awk';

export interface Literal {
  start: number;
  end: number;
  value: string;
  /** Interpolation (`$x`, `#{x}`, `${x}`, f-string `{x}`) was replaced by a shell variable. */
  dynamic: boolean;
}

/**
 * Finds the string literals of `code` and returns them with a copy of the code whose literals
 * (quotes included) are blanked, so call names are searched outside strings only. Backticks are
 * strings in JavaScript and shell-outs in perl, ruby and php (they are returned separately).
 */
export function lexCode(
  family: Family,
  code: string,
): { masked: string; literals: Literal[]; backticks: Literal[] } {
  const literals: Literal[] = [];
  const backticks: Literal[] = [];
  let masked = '';
  let i = 0;
  const interpolates = (q: string) =>
    family === 'node' ? q === '`' : family === 'python' ? false : q === '"' || q === '`';
  while (i < code.length) {
    const c = code[i]!;
    if (c === '#' && (family === 'python' || family === 'ruby' || family === 'perl')) {
      // A comment (perl and ruby: only at the start of a line or after a blank, so `$#a` and `#{` stay).
      if (family === 'python' || i === 0 || /\s/.test(code[i - 1]!)) {
        const nl = code.indexOf('\n', i);
        const end = nl < 0 ? code.length : nl;
        masked += ' '.repeat(end - i);
        i = end;
        continue;
      }
    }
    if (c !== '"' && c !== "'" && c !== '`') {
      masked += c;
      i++;
      continue;
    }
    // Python prefixes: f"..." interpolates, r"..." has no escapes.
    const prefix = family === 'python' ? (/([rRbBuUfF]{1,2})$/.exec(masked)?.[1] ?? '') : '';
    const fString = /[fF]/.test(prefix);
    const raw = /[rR]/.test(prefix);
    const triple = family === 'python' && code.startsWith(c.repeat(3), i);
    const q = triple ? c.repeat(3) : c;
    let j = i + q.length;
    let value = '';
    let dynamic = false;
    while (j < code.length && !code.startsWith(q, j)) {
      const ch = code[j]!;
      if (ch === '\\' && !raw && j + 1 < code.length) {
        const n = code[j + 1]!;
        value += n === 'n' ? '\n' : n === 't' ? '\t' : n;
        j += 2;
        continue;
      }
      if (fString && ch === '{' && code[j + 1] !== '{') {
        const close = code.indexOf('}', j);
        value += '$X';
        dynamic = true;
        j = close < 0 ? code.length : close + 1;
        continue;
      }
      if (interpolates(c) && !triple) {
        const m =
          /^\$\{[^}]*\}|^#\{[^}]*\}|^\$[A-Za-z_][\w]*(?:->\w+|\[[^\]]*\]|\{[^}]*\})*|^@[A-Za-z_]\w*/.exec(
            code.slice(j, j + 200),
          );
        if (m && (family !== 'node' || m[0].startsWith('${'))) {
          value += '$X';
          dynamic = true;
          j += m[0].length;
          continue;
        }
      }
      value += ch;
      j++;
    }
    const end = Math.min(code.length, j + q.length);
    const lit = { start: i - prefix.length, end, value, dynamic };
    if (c === '`' && family !== 'node' && family !== 'python') backticks.push(lit);
    else literals.push(lit);
    // The quotes stay, so `require("fs")` still reads as a call with a literal.
    masked += end - i >= 2 ? `${c}${' '.repeat(end - i - 2)}${c}` : ' '.repeat(end - i);
    i = end;
  }
  return { masked, literals, backticks };
}

/** Quotes a word for a POSIX shell. */
export function sq(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * The literal arguments of a call starting at `at` (just after the call's name or `(`): a string,
 * a list of strings, or several strings; followed by anything else is fine (options such as
 * `shell=True`). Interpolation or concatenation shows as a shell variable, so a built command
 * reads as dynamic. Null when the first argument is not literal.
 */
export function literalArgs(masked: string, literals: Literal[], at: number): string[] | null {
  let i = at;
  const skip = () => {
    while (i < masked.length && /[\s(]/.test(masked[i]!)) i++;
  };
  const literalAt = (k: number) => literals.find((l) => l.start === k);
  const tail = (l: Literal) => {
    // `"rm -rf " + d`, `"rm %s" % d`, `"rm " . $d`: the rest is not known.
    let k = l.end;
    while (k < masked.length && masked[k] === ' ') k++;
    return /[+%.]/.test(masked[k] ?? '') && masked.slice(k, k + 2) !== '.,' ? `${l.value}$X` : l.value;
  };
  skip();
  const words: string[] = [];
  const open = masked[i];
  if (open === '[' || (open === '%' && masked[i + 1] === 'w')) {
    // A list: ["rm", "-rf", "/"] (ruby %w[...] is rare enough to count as unreadable).
    if (open === '%') return null;
    i++;
    for (;;) {
      while (i < masked.length && /[\s,]/.test(masked[i]!)) i++;
      if (masked[i] === ']') return words.length > 0 ? words : null;
      const l = literalAt(i);
      if (!l) return null;
      words.push(l.dynamic ? '$X' : l.value);
      i = l.end;
    }
  }
  for (;;) {
    const l = literalAt(i);
    if (!l) break;
    words.push(tail(l));
    i = l.end;
    while (i < masked.length && /\s/.test(masked[i]!)) i++;
    if (masked[i] !== ',') break;
    i++;
    while (i < masked.length && /\s/.test(masked[i]!)) i++;
    // A following list (spawn('rm', ['-rf', '/'])): its words are arguments.
    if (masked[i] === '[') {
      const rest = literalArgs(masked, literals, i);
      if (rest) words.push(...rest.map(sq));
      break;
    }
  }
  return words.length > 0 ? words : null;
}
