/**
 * Pure helpers of the analysis that read a command's words: what echo/printf print, what a fetch
 * writes, what `env -S` and `watch` run. No state, no parsing.
 */
import type { Cmd } from './cmd.ts';

export function basename(path: string): string {
  const i = path.lastIndexOf('/');
  return i >= 0 ? path.slice(i + 1) : path;
}

const FETCH_OR_DECODE = /^(curl|wget|fetch|http|https|xh|aria2c|base64|base32|xxd|openssl|uudecode)$/;

/** Files a fetch or decode writes, by basename: `curl -o f`, `curl -O url`, `wget url`, `wget -O f`, `curl url > f`. */
export function downloadedFiles(cmd: Cmd): string[] {
  if (!FETCH_OR_DECODE.test(cmd.name)) return [];
  const out: string[] = [];
  const a = cmd.args;
  let named = false;
  for (let i = 0; i < a.length; i++) {
    const arg = a[i]!;
    if (arg === '-o' || arg === '--output' || (cmd.name === 'wget' && arg === '-O')) {
      if (a[i + 1] !== undefined) out.push(a[i + 1]!);
      named = true;
      i++;
    } else if (/^--(output|output-document)=/.test(arg)) {
      out.push(arg.slice(arg.indexOf('=') + 1));
      named = true;
    }
  }
  const remoteName =
    cmd.name === 'wget'
      ? !named
      : a.some((x) => x === '-O' || x === '--remote-name' || /^-[a-zA-Z]*O[a-zA-Z]*$/.test(x));
  if (remoteName)
    for (const x of a)
      if (/^https?:\/\//.test(x)) out.push(x.split(/[?#]/)[0]!.split('/').pop() || 'index.html');
  for (const r of cmd.redirects) {
    if (r.target && (r.op === '>' || r.op === '>>' || r.op === '>|' || r.op === '&>'))
      out.push(r.target.text);
  }
  return out.filter((f) => f !== '-' && f !== '/dev/null').map(basename);
}

/** What echo / printf with only literal arguments writes; null when it cannot be known. */
export function literalOutput(cmd: Cmd): string | null {
  if (cmd.name !== 'echo' && cmd.name !== 'printf') return null;
  if (cmd.argWords.some((w) => w.dynamic)) return null;
  let args = cmd.args;
  if (cmd.name === 'echo') {
    let escapes = false;
    while (args.length > 0 && /^-[neE]+$/.test(args[0]!)) {
      if (args[0]!.includes('e')) escapes = true;
      args = args.slice(1);
    }
    const text = args.join(' ');
    return escapes ? unescapeC(text) : text;
  }
  if (args.length === 0) return null;
  const format = args[0]!;
  if (format === '%s' || format === '%s\\n') return args.slice(1).join('');
  if (format.includes('%')) return null;
  return unescapeC(format);
}

export function unescapeC(text: string): string {
  return text.replace(/\\(x[0-9a-fA-F]{1,2}|[0-7]{1,3}|.)/g, (_, e: string) => {
    if (e[0] === 'x') return String.fromCharCode(Number.parseInt(e.slice(1), 16));
    if (/^[0-7]/.test(e)) return String.fromCharCode(Number.parseInt(e, 8));
    return ({ n: '\n', t: '\t', r: '\r', '\\': '\\' } as Record<string, string>)[e] ?? e;
  });
}

/** `env -S 'cmd args' more`: the string is split into words and run. */
export function splitStringArg(args: string[]): string | null {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '-S' || a === '--split-string') return [args[i + 1] ?? '', ...args.slice(i + 2)].join(' ');
    if (a.startsWith('--split-string=')) return [a.slice(15), ...args.slice(i + 1)].join(' ');
    if (/^-[^-]*S./.test(a)) return [a.slice(a.indexOf('S') + 1), ...args.slice(i + 1)].join(' ');
    if (!a.startsWith('-')) return null;
  }
  return null;
}

export function watchCommand(args: string[]): string[] {
  let i = 0;
  while (i < args.length && args[i]!.startsWith('-')) {
    i += /^(-n|--interval|-q|--equexit)$/.test(args[i]!) ? 2 : 1;
  }
  return args.slice(i);
}

/** xargs options whose value is the next word unless attached (`-n 1`, `-n1`); -I is read apart. */
const XARGS_SHORT_VALUE = 'adELnPs';
const XARGS_LONG_VALUE =
  /^--(arg-file|delimiter|eof|max-lines|max-args|max-procs|max-chars|process-slot-var)$/;

/**
 * The replace string of `xargs -I R`, `-i[R]` or `--replace[=R]` (`{}` when not given), from the
 * words after `xargs` up to its command; null when there is none. Each input line takes its place.
 */
export function xargsReplace(args: readonly string[]): string | null {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--' || !a.startsWith('-') || a === '-') return null;
    if (a === '-I') return args[i + 1] ?? null;
    if (a === '-i' || a === '--replace') return '{}';
    if (a.startsWith('--replace=')) return a.slice(10) || '{}';
    if (a.startsWith('--')) {
      if (XARGS_LONG_VALUE.test(a)) i++;
      continue;
    }
    for (let k = 1; k < a.length; k++) {
      const letter = a[k]!;
      if (letter === 'I') return a.slice(k + 1) || (args[i + 1] ?? null);
      if (letter === 'i') return a.slice(k + 1) || '{}';
      if (XARGS_SHORT_VALUE.includes(letter)) {
        if (k === a.length - 1) i++;
        break;
      }
    }
  }
  return null;
}

/**
 * `trap ACTION SIGNAL...`: ACTION is a script the shell runs later. Null when there is none
 * (`trap`, `trap -p`, `trap - INT`, `trap '' INT`, or one word, which resets that signal).
 */
export function trapAction(args: readonly string[]): string | null {
  const rest = args[0] === '--' ? args.slice(1) : args;
  const action = rest[0];
  if (action === undefined || rest.length < 2 || action === '' || action.startsWith('-')) return null;
  return action;
}
