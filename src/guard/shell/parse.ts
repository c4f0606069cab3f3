/**
 * Tokens -> pipelines of simple commands. Control structure (if / for / case / functions / brace
 * groups / subshells) is flattened: for judging, every command that could run is a command, and the
 * only structure kept is which commands are joined by `|` (that is where pipe-to-shell lives).
 */
import { ShellParseError } from '../../errors.ts';
import { type RedirToken, type Token, tokenize, type Word } from './tokenizer.ts';

export interface Redirect {
  op: string;
  fd: string | null;
  /** The file, fd or here-string word; for here-documents, the delimiter word. */
  target: Word | null;
  heredoc?: RedirToken['heredoc'];
}

export interface SimpleCommand {
  /** `VAR=value` words before the command name. */
  assignments: Word[];
  words: Word[];
  redirects: Redirect[];
  start: number;
  end: number;
}

export interface Pipeline {
  commands: SimpleCommand[];
}

export interface Script {
  source: string;
  pipelines: Pipeline[];
}

/** The guard follows at most this many levels of subshells, substitutions and `sh -c` strings. */
export const MAX_NESTING = 5;

/** Words that open or close control structure; the command that matters comes after them. */
const PREFIX_KEYWORDS = new Set([
  'if',
  'then',
  'else',
  'elif',
  'do',
  'while',
  'until',
  '!',
  '{',
  'time',
  'coproc',
]);
const CLOSING_KEYWORDS = new Set(['fi', 'done', 'esac', '}']);
/** Keywords whose remaining words up to the next operator are not a command (`for x in a b`). */
const HEADER_KEYWORDS = new Set(['for', 'select', 'case']);

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;

/** The parser's state; module-level helpers take it (no closures per call: the guard runs per command). */
interface ParseState {
  pipelines: Pipeline[];
  pipeline: SimpleCommand[];
  cmd: SimpleCommand;
  pendingRedirect: Redirect | null;
  skipWords: boolean;
  skipOneWord: boolean;
}

function fresh(): SimpleCommand {
  return { assignments: [], words: [], redirects: [], start: -1, end: -1 };
}

function touch(st: ParseState, start: number, end: number) {
  if (st.cmd.start < 0) st.cmd.start = start;
  st.cmd.end = end;
}

function endCommand(st: ParseState) {
  const cmd = st.cmd;
  if (cmd.words.length > 0 || cmd.redirects.length > 0 || cmd.assignments.length > 0) st.pipeline.push(cmd);
  st.cmd = fresh();
  st.pendingRedirect = null;
  st.skipWords = false;
  st.skipOneWord = false;
}

function endPipeline(st: ParseState) {
  endCommand(st);
  if (st.pipeline.length > 0) st.pipelines.push({ commands: st.pipeline });
  st.pipeline = [];
}

export function parse(source: string, depth: number): Script {
  const tokens: Token[] = tokenize(source);
  const st: ParseState = {
    pipelines: [],
    pipeline: [],
    cmd: fresh(),
    pendingRedirect: null,
    skipWords: false,
    skipOneWord: false,
  };
  let parens = 0;
  let parenOpenAt = -1;
  let functionParen = false;

  for (const t of tokens) {
    if (t.kind === 'word') {
      if (st.pendingRedirect) {
        st.pendingRedirect.target = t;
        st.pendingRedirect = null;
        touch(st, t.start, t.end);
        continue;
      }
      if (st.skipOneWord) {
        st.skipOneWord = false;
        continue;
      }
      if (st.skipWords) continue;
      if (st.cmd.words.length === 0 && !t.quoted) {
        if (PREFIX_KEYWORDS.has(t.text)) continue;
        if (CLOSING_KEYWORDS.has(t.text)) continue;
        if (HEADER_KEYWORDS.has(t.text)) {
          st.skipWords = true;
          continue;
        }
        if (t.text === 'function') {
          st.skipOneWord = true;
          continue;
        }
        if (ASSIGNMENT.test(t.text)) {
          st.cmd.assignments.push(t);
          touch(st, t.start, t.end);
          continue;
        }
      }
      st.cmd.words.push(t);
      touch(st, t.start, t.end);
      continue;
    }
    if (t.kind === 'redir') {
      const r: Redirect = { op: t.op, fd: t.fd, target: null };
      if (t.heredoc) r.heredoc = t.heredoc;
      st.cmd.redirects.push(r);
      st.pendingRedirect = r;
      touch(st, t.start, t.end);
      continue;
    }
    switch (t.op) {
      case '|':
        endCommand(st);
        break;
      case '(':
        if (st.cmd.words.length > 0) {
          // `name() { ... }` defines a function: the name is not a command; its body is judged.
          st.cmd = fresh();
          functionParen = true;
          break;
        }
        parens++;
        if (parens === 1) parenOpenAt = t.start;
        if (depth + parens > MAX_NESTING) {
          throw new ShellParseError('guard.shell_too_deep', `subshells nested deeper than ${MAX_NESTING}`);
        }
        break;
      case ')':
        if (functionParen) {
          functionParen = false;
          // The body (a brace group) follows, possibly after a newline: it is not a pipeline stage of anything.
          break;
        }
        // A `)` with no `(` is a case pattern (`a) cmd ;;`); it separates like `;`.
        if (parens > 0) {
          parens--;
          endCommand(st);
        } else endPipeline(st);
        break;
      default:
        endPipeline(st);
    }
  }
  endPipeline(st);
  if (parens > 0) throw new ShellParseError('guard.shell_unbalanced', `unclosed ( at offset ${parenOpenAt}`);
  return { source, pipelines: st.pipelines };
}
