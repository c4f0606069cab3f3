/**
 * A tokenizer for the subset of POSIX sh / bash that matters for judging a command: words with
 * their quoting resolved, operators, redirections, here-documents, and the source text of every
 * command / process substitution so the parser can judge those too.
 *
 * It never runs or expands anything. A word's `text` is what the shell would pass after quote
 * removal, with each substitution left as a placeholder (SUB) and variables left as written
 * (`$HOME`), so `r''m`, `\rm` and `$'\x72m'` all read `rm`, and `"rm -rf /"` is one word of data.
 */
import { ShellParseError } from '../../errors.ts';

/** Stands for one substitution inside a word's text; `Word.subs[i]` is the i-th occurrence. */
export const SUB = '\u0001';

export interface Sub {
  /** `$(...)` and backticks are `cmd`; `<(...)` is `proc_in`, `>(...)` is `proc_out`. */
  kind: 'cmd' | 'proc_in' | 'proc_out';
  source: string;
}

export interface Word {
  kind: 'word';
  text: string;
  /** Any quoting or escaping took part. */
  quoted: boolean;
  /** Contains a variable, parameter or arithmetic expansion, or a substitution: its value is unknown here. */
  dynamic: boolean;
  /** Has an unquoted `*`, `?`, `[` or `{`: the shell may expand it into file names (globbing, braces). */
  glob?: boolean;
  subs: Sub[];
  start: number;
  end: number;
}

export type Op = '&&' | '||' | ';' | '&' | '|' | '\n' | '(' | ')';

export interface OpToken {
  kind: 'op';
  op: Op;
  start: number;
  end: number;
}

export interface RedirToken {
  kind: 'redir';
  /** `>`, `>>`, `>|`, `<`, `<>`, `<<`, `<<-`, `<<<`, `>&`, `<&`, `&>`, `&>>`. */
  op: string;
  /** Explicit file descriptor (`2>`), or null. */
  fd: string | null;
  start: number;
  end: number;
  /** Filled for `<<` / `<<-`: the here-document body and whether its delimiter was quoted (no expansion). */
  heredoc?: { body: string; quoted: boolean; subs: Sub[] };
}

export type Token = Word | OpToken | RedirToken;

const WORD_END = new Set([' ', '\t', '\n', ';', '&', '|', '<', '>', '(', ')']);

function unbalanced(what: string, at: number): never {
  throw new ShellParseError('guard.shell_unbalanced', `unbalanced ${what} starting at offset ${at}`);
}

/** A bracket pair `matchClosing` balances, and what an unbalanced one is called in the error. */
interface Brackets {
  open: string;
  close: string;
  name: string;
  /**
   * The body is a command (`$(...)`): backticks nest and `#` starts a comment, so a bracket inside
   * either does not count. In `${...}` both are plain characters.
   */
  command: boolean;
}

const PARENS: Brackets = { open: '(', close: ')', name: 'parenthesis', command: true };
const BRACES: Brackets = { open: '{', close: '}', name: 'brace', command: false };

/**
 * Index just past the bracket closing the one at `open`, skipping escapes, quoted text and nested
 * substitutions so a bracket inside quotes does not close it.
 */
function matchClosing(src: string, open: number, b: Brackets): number {
  let depth = 0;
  let i = open;
  while (i < src.length) {
    const c = src[i];
    if (c === '\\') {
      i += 2;
      continue;
    }
    if (c === "'") {
      const close = src.indexOf("'", i + 1);
      if (close < 0) unbalanced('single quote', i);
      i = close + 1;
      continue;
    }
    if (c === '"') {
      i = skipDoubleQuoted(src, i + 1);
      continue;
    }
    if (b.command && c === '`') {
      i = matchBacktick(src, i) + 1;
      continue;
    }
    if (b.command && c === '#' && (i === 0 || /[\s;&|(]/.test(src[i - 1]!))) {
      // A comment runs to the end of its line; a `)` in it does not count.
      const nl = src.indexOf('\n', i);
      i = nl < 0 ? src.length : nl;
      continue;
    }
    if (c === b.open) depth++;
    else if (c === b.close) {
      depth--;
      if (depth === 0) return i + 1;
    }
    i++;
  }
  return unbalanced(b.name, open);
}

/** Index just past the `)` matching the `(` at `open`. */
export function matchParen(src: string, open: number): number {
  return matchClosing(src, open, PARENS);
}

/** Index of the `"` closing a double-quoted string whose body starts at `i`, plus one. */
function skipDoubleQuoted(src: string, i: number): number {
  const start = i - 1;
  while (i < src.length) {
    const c = src[i];
    if (c === '\\') i += 2;
    else if (c === '"') return i + 1;
    else if (c === '$' && src[i + 1] === '(') i = matchParen(src, i + 1);
    else if (c === '`') i = matchBacktick(src, i) + 1;
    else i++;
  }
  return unbalanced('double quote', start);
}

/** Index of the backtick closing the one at `open`. */
function matchBacktick(src: string, open: number): number {
  let i = open + 1;
  while (i < src.length) {
    const c = src[i];
    if (c === '\\') i += 2;
    else if (c === '`') return i;
    else i++;
  }
  return unbalanced('backtick', open);
}

/** Index just past the `}` matching the `{` of `${` at `open`. */
function matchBrace(src: string, open: number): number {
  return matchClosing(src, open, BRACES);
}

function unescapeBacktick(inner: string): string {
  return inner.replace(/\\([`\\$])/g, '$1');
}

/** \xHH, \uHHHH, \UHHHHHHHH, \NNN (octal) in $'...'. */
const ANSI_NUMERIC = /^(?:x([0-9a-fA-F]{1,2})|u([0-9a-fA-F]{1,4})|U([0-9a-fA-F]{1,8})|([0-7]{1,3}))/;
const ANSI: Record<string, string> = {
  n: '\n',
  t: '\t',
  r: '\r',
  a: '\x07',
  b: '\b',
  e: '\x1b',
  E: '\x1b',
  f: '\f',
  v: '\v',
};

/** Decodes a `$'...'` body (`i` just past the opening quote); returns the text and the index after the closing quote. */
function readAnsiC(src: string, i: number): { text: string; end: number } {
  const start = i - 2;
  let text = '';
  while (i < src.length) {
    const c = src[i]!;
    if (c === "'") return { text, end: i + 1 };
    if (c !== '\\') {
      text += c;
      i++;
      continue;
    }
    const n = src[i + 1] ?? '';
    if (ANSI[n] !== undefined) {
      text += ANSI[n];
      i += 2;
      continue;
    }
    const esc = ANSI_NUMERIC.exec(src.slice(i + 1, i + 10));
    if (esc) {
      const [all, hex, u4, u8, oct] = esc;
      const code = hex ?? u4 ?? u8;
      text +=
        code !== undefined
          ? String.fromCodePoint(Math.min(Number.parseInt(code, 16), 0x10ffff))
          : String.fromCharCode(Number.parseInt(oct!, 8) & 0xff);
      i += 1 + all.length;
      continue;
    }
    text += n;
    i += 2;
  }
  return unbalanced("$'...' quote", start);
}

/**
 * Reads an expansion valid both unquoted and inside double quotes (at `src[i] === '$'` or a
 * backtick), or else the one literal character at `i`. Appends to `w` and returns the next index.
 */
function readExpansion(src: string, i: number, w: Word): number {
  const c = src[i]!;
  if (c === '`') {
    const close = matchBacktick(src, i);
    w.subs.push({ kind: 'cmd', source: unescapeBacktick(src.slice(i + 1, close)) });
    w.text += SUB;
    w.dynamic = true;
    return close + 1;
  }
  if (c !== '$') {
    w.text += c;
    return i + 1;
  }
  const n = src[i + 1];
  if (n === '(') {
    const end = matchParen(src, i + 1);
    if (src[i + 2] === '(') {
      // $(( arithmetic )): data, though of unknown value.
      w.text += src.slice(i, end);
    } else {
      w.subs.push({ kind: 'cmd', source: src.slice(i + 2, end - 1) });
      w.text += SUB;
    }
    w.dynamic = true;
    return end;
  }
  if (n === '{') {
    const end = matchBrace(src, i + 1);
    w.text += src.slice(i, end);
    w.dynamic = true;
    return end;
  }
  const m = /^[A-Za-z_][A-Za-z0-9_]*|^[0-9@*#?$!-]/.exec(src.slice(i + 1, i + 65));
  if (m) {
    w.text += `$${m[0]}`;
    w.dynamic = true;
    return i + 1 + m[0].length;
  }
  w.text += '$';
  return i + 1;
}

/** Reads a double-quoted body from `i` (just past the `"`) to the closing quote into `w`. */
function readDoubleQuoted(src: string, i: number, w: Word): number {
  const start = i - 1;
  while (i < src.length) {
    const c = src[i]!;
    if (c === '"') return i + 1;
    if (c === '\\') {
      const n = src[i + 1];
      if (n === '\n') i += 2;
      else if (n === '$' || n === '`' || n === '"' || n === '\\') {
        w.text += n;
        i += 2;
      } else {
        w.text += c;
        i++;
      }
      continue;
    }
    i = readExpansion(src, i, w);
  }
  return unbalanced('double quote', start);
}

/** Expands an unquoted here-document body the way the shell would: substitutions run, quotes are text. */
function scanHeredocBody(body: string): { subs: Sub[] } {
  const w: Word = { kind: 'word', text: '', quoted: false, dynamic: false, subs: [], start: 0, end: 0 };
  let i = 0;
  while (i < body.length) {
    const c = body[i]!;
    if (c === '\\' && (body[i + 1] === '$' || body[i + 1] === '`' || body[i + 1] === '\\')) {
      w.text += body[i + 1];
      i += 2;
      continue;
    }
    i = readExpansion(body, i, w);
  }
  return { subs: w.subs };
}

/** Reads one word starting at `i`; the caller has checked `src[i]` is not an operator or blank. */
function readWord(src: string, i: number): Word {
  const w: Word = { kind: 'word', text: '', quoted: false, dynamic: false, subs: [], start: i, end: i };
  while (i < src.length) {
    const c = src[i]!;
    if (WORD_END.has(c)) break;
    if (c === '\\') {
      const n = src[i + 1];
      if (n === undefined) {
        i++;
        continue;
      }
      if (n !== '\n') {
        w.text += n;
        w.quoted = true;
      }
      i += 2;
      continue;
    }
    if (c === "'") {
      const close = src.indexOf("'", i + 1);
      if (close < 0) unbalanced('single quote', i);
      w.text += src.slice(i + 1, close);
      w.quoted = true;
      i = close + 1;
      continue;
    }
    if (c === '"') {
      w.quoted = true;
      i = readDoubleQuoted(src, i + 1, w);
      continue;
    }
    if (c === '$' && src[i + 1] === "'") {
      const r = readAnsiC(src, i + 2);
      w.text += r.text;
      w.quoted = true;
      i = r.end;
      continue;
    }
    if (c === '$' && src[i + 1] === '"') {
      w.quoted = true;
      i = readDoubleQuoted(src, i + 2, w);
      continue;
    }
    if (c === '*' || c === '?' || c === '[' || c === '{') w.glob = true;
    i = readExpansion(src, i, w);
  }
  w.end = i;
  return w;
}

/** The tokenizer's state; module-level helpers take it (no closures per call: the guard runs per command). */
interface TokState {
  src: string;
  tokens: Token[];
  i: number;
  /** Here-documents whose bodies start after the next newline. */
  pending: PendingHeredoc[];
  /** A `<<` read, its delimiter word not yet. */
  awaiting: PendingHeredoc | null;
}

function pushOp(st: TokState, o: Op, len: number) {
  st.tokens.push({ kind: 'op', op: o, start: st.i, end: st.i + len });
  st.i += len;
}

function pushRedir(st: TokState, o: string, len: number, fd: string | null, start = st.i): RedirToken {
  const t: RedirToken = { kind: 'redir', op: o, fd, start, end: st.i + len };
  st.tokens.push(t);
  st.i += len;
  return t;
}

function readRedirect(st: TokState, fd: string | null, start: number) {
  const c = st.src[st.i]!;
  const two = st.src.slice(st.i, st.i + 3);
  if (c === '<') {
    if (two === '<<<') pushRedir(st, '<<<', 3, fd, start);
    else if (two === '<<-') st.awaiting = { redir: pushRedir(st, '<<-', 3, fd, start), strip: true };
    else if (two.startsWith('<<')) st.awaiting = { redir: pushRedir(st, '<<', 2, fd, start), strip: false };
    else if (two.startsWith('<&')) pushRedir(st, '<&', 2, fd, start);
    else if (two.startsWith('<>')) pushRedir(st, '<>', 2, fd, start);
    else pushRedir(st, '<', 1, fd, start);
  } else if (two.startsWith('>>')) pushRedir(st, '>>', 2, fd, start);
  else if (two.startsWith('>&')) pushRedir(st, '>&', 2, fd, start);
  else if (two.startsWith('>|')) pushRedir(st, '>|', 2, fd, start);
  else pushRedir(st, '>', 1, fd, start);
}

/** Splits a command line into tokens. Throws ShellParseError on unbalanced quoting. */
export function tokenize(src: string): Token[] {
  const st: TokState = { src, tokens: [], i: 0, pending: [], awaiting: null };
  const tokens = st.tokens;
  const n = src.length;
  while (st.i < n) {
    const i = st.i;
    const c = src[i]!;
    if (c === ' ' || c === '\t' || c === '\r') {
      st.i++;
      continue;
    }
    if (c === '\\' && src[i + 1] === '\n') {
      st.i += 2;
      continue;
    }
    if (c === '#') {
      const nl = src.indexOf('\n', i);
      st.i = nl < 0 ? n : nl;
      continue;
    }
    if (c === '\n') {
      pushOp(st, '\n', 1);
      for (const h of st.pending.splice(0)) st.i = readHeredoc(src, st.i, h);
      continue;
    }
    if (c === ';') {
      // `;;`, `;&`, `;;&` end case branches; for judging they separate commands like `;`.
      let len = 1;
      while (src[i + len] === ';' || src[i + len] === '&') len++;
      pushOp(st, ';', len);
      continue;
    }
    if (c === '&') {
      if (src[i + 1] === '&') pushOp(st, '&&', 2);
      else if (src[i + 1] === '>')
        pushRedir(st, src[i + 2] === '>' ? '&>>' : '&>', src[i + 2] === '>' ? 3 : 2, null);
      else pushOp(st, '&', 1);
      continue;
    }
    if (c === '|') {
      if (src[i + 1] === '|') pushOp(st, '||', 2);
      else pushOp(st, '|', src[i + 1] === '&' ? 2 : 1);
      continue;
    }
    if (c === '(' || c === ')') {
      pushOp(st, c, 1);
      continue;
    }
    if ((c === '<' || c === '>') && src[i + 1] === '(') {
      const end = matchParen(src, i + 1);
      tokens.push({
        kind: 'word',
        text: SUB,
        quoted: false,
        dynamic: true,
        subs: [{ kind: c === '<' ? 'proc_in' : 'proc_out', source: src.slice(i + 2, end - 1) }],
        start: i,
        end,
      });
      st.i = end;
      continue;
    }
    if (c === '<' || c === '>') {
      readRedirect(st, null, i);
      continue;
    }
    const word = readWord(src, i);
    st.i = word.end;
    // `2>file`: a word of digits right before < or > is the redirect's file descriptor.
    const after = src[st.i];
    if (
      (after === '<' || after === '>') &&
      !word.quoted &&
      /^\d+$/.test(word.text) &&
      src[st.i + 1] !== '('
    ) {
      readRedirect(st, word.text, word.start);
      continue;
    }
    if (st.awaiting) {
      st.awaiting.delimiter = word;
      st.pending.push(st.awaiting);
      st.awaiting = null;
    }
    tokens.push(word);
  }
  if (st.awaiting) unbalanced('here-document (no delimiter)', st.awaiting.redir.start);
  // Bodies of here-documents that never reached a newline are empty, as in bash.
  for (const h of st.pending) h.redir.heredoc = { body: '', quoted: h.delimiter?.quoted ?? false, subs: [] };
  return tokens;
}

interface PendingHeredoc {
  redir: RedirToken;
  /** `<<-`: leading tabs are stripped from body lines and the delimiter line. */
  strip: boolean;
  delimiter?: Word;
}

/** Reads a here-document body starting at `i` (just past a newline); returns the index after its delimiter line. */
function readHeredoc(src: string, i: number, h: PendingHeredoc): number {
  const delimiter = h.delimiter?.text ?? '';
  const lines: string[] = [];
  let pos = i;
  while (pos < src.length) {
    const nl = src.indexOf('\n', pos);
    const lineEnd = nl < 0 ? src.length : nl;
    let line = src.slice(pos, lineEnd);
    if (h.strip) line = line.replace(/^\t+/, '');
    pos = nl < 0 ? src.length : nl + 1;
    if (line === delimiter) break;
    lines.push(line);
  }
  const body = lines.join('\n');
  const quoted = h.delimiter?.quoted ?? false;
  // The raw body is kept (it is re-parsed when fed to a shell); an unquoted delimiter means the
  // shell expands the body, so its substitutions run and are judged.
  h.redir.heredoc = { body, quoted, subs: quoted ? [] : scanHeredocBody(body).subs };
  return pos;
}
