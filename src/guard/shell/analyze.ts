/**
 * Parsed script -> the flat list of commands that would run, each with its arguments after quote
 * removal and wrapper removal (`sudo timeout 5 nice -n 10 rm -rf /` is an `rm`), and with every
 * nested script followed: substitutions, `bash -c '...'`, `eval`, `ssh host '...'`, `env -S`,
 * `find -exec`, and literal text piped or here-doc'd into a shell. Rules then look at one command
 * at a time (and at its pipeline neighbours).
 */
import { ShellParseError } from '../../errors.ts';
import type { Analysis, Cmd } from './cmd.ts';
import { inlineCode, scanInlineCode } from './inline.ts';
import { MAX_NESTING, parse, type SimpleCommand } from './parse.ts';
import { HOME, NO_ENV, normalizePath, type ShellEnv } from './paths.ts';
import { SUB, type Word } from './tokenizer.ts';
import {
  basename,
  downloadedFiles,
  literalOutput,
  splitStringArg,
  trapAction,
  watchCommand,
  xargsReplace,
} from './words.ts';
import { SHELLS, shellMode, WRAPPERS, wrappedStart } from './wrappers.ts';

/** Shown for a substitution whose output is unknown. Starts with `$`, so it reads as dynamic. */
export const UNKNOWN = '$(…)';
const REPARSE_UNKNOWN = '$__sub';

/** A shell given `-c` and no command string: bash refuses it, and nothing can be judged. */
export class MissingScriptError extends ShellParseError {
  constructor(message: string) {
    super('guard.shell_unbalanced', message);
  }
}

/** What a stage's commands share; newCmd adds what is the command's own. */
type Base = Omit<Cmd, 'name' | 'argv0' | 'args' | 'argWords' | 'dynamicName' | 'globName' | 'elevation'>;

export function analyze(command: string, env: ShellEnv = NO_ENV): Analysis {
  const out: Analysis = {
    cmds: [],
    sources: [],
    cwd: null,
    dir: env.cwd,
    downloads: new Set(),
    env,
    vars: new Map(),
    netFds: new Set(),
  };
  analyzeScript(command, 0, [], out);
  for (const cmd of out.cmds) for (const f of downloadedFiles(cmd)) out.downloads.add(f);
  return out;
}

/** Parses and analyses one script; returns the commands it produced (also appended to `out`). */
function analyzeScript(source: string, depth: number, wrappers: string[], out: Analysis): Cmd[] {
  if (depth > MAX_NESTING) {
    throw new ShellParseError('guard.shell_too_deep', `commands nested deeper than ${MAX_NESTING} levels`);
  }
  out.sources.push(source);
  const first = out.cmds.length;
  // A nested script (substitution, sh -c) runs in its own process: its `cd` does not leak out.
  const savedCwd = out.cwd;
  const savedDir = out.dir;
  const script = parse(source, depth);
  for (const pipeline of script.pipelines) {
    const stages: Cmd[] = [];
    for (const sc of pipeline.commands) stages.push(buildStage(sc, source, depth, wrappers, out));
    for (let i = 0; i < stages.length; i++) {
      const cmd = stages[i]!;
      cmd.pipeline = stages;
      cmd.stage = i;
      if (cmd.stdinText === null && i > 0) cmd.stdinText = literalOutput(stages[i - 1]!);
    }
    for (const cmd of stages) {
      judgeStdinScript(cmd, depth, out);
      trackNetFds(cmd, out);
    }
    // Only a `cd` that is the whole pipeline changes this shell's directory.
    if (stages.length === 1) trackCd(stages[0]!, out);
  }
  out.cwd = savedCwd;
  out.dir = savedDir;
  return out.cmds.slice(first);
}

/** Follows literal `cd` / `pushd`; an unknown target makes the directory unknown. */
function trackCd(cmd: Cmd, out: Analysis) {
  if (cmd.name !== 'cd' && cmd.name !== 'pushd') return;
  const target = cmd.args.find((a) => !a.startsWith('-') || a === '-');
  const word = target === undefined ? undefined : cmd.argWords[cmd.args.indexOf(target)];
  if (target === undefined) out.cwd = '~';
  else if (target === '-' || word?.dynamic)
    out.cwd = /^(\$HOME|\$\{HOME\})(\/.*)?$/.test(target) ? `~${target.replace(/^\$\{?HOME\}?/, '')}` : null;
  else if (target.startsWith('/') || target.startsWith('~')) out.cwd = target;
  else out.cwd = out.cwd === null ? null : `${out.cwd.replace(/\/$/, '')}/${target}`;
  // The absolute directory: `~` forms are known; a relative cd needs a known directory.
  if (target === undefined) out.dir = HOME;
  else if (out.cwd !== null && (out.cwd.startsWith('/') || out.cwd.startsWith('~')))
    out.dir = normalizePath(out.cwd, null);
  else if (target === '-' || word?.dynamic) out.dir = null;
  else out.dir = out.dir === null ? null : normalizePath(target, out.dir);
}

/** `exec 3<>/dev/tcp/h/p` (or `3>`, `3<`): fd 3 is a socket for the rest of the line. */
function trackNetFds(cmd: Cmd, out: Analysis) {
  if (cmd.name !== 'exec' || cmd.args.length > 0) return;
  for (const r of cmd.redirects)
    if (r.fd !== null && r.target && /^\/dev\/(tcp|udp)\//.test(r.target.text)) out.netFds.add(r.fd);
}

const DECLARES = new Set(['export', 'declare', 'local', 'readonly', 'typeset']);

/** `NAME=value` with a literal value is remembered; a value known only at run time forgets the name. */
function trackAssignment(w: Word, out: Analysis) {
  const eq = w.text.indexOf('=');
  if (eq <= 0) return;
  const name = w.text.slice(0, eq).replace(/\+$/, '');
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return;
  if (w.dynamic) out.vars.delete(name);
  else out.vars.set(name, w.text.slice(eq + 1));
}

function buildStage(
  sc: SimpleCommand,
  source: string,
  depth: number,
  wrappers: string[],
  out: Analysis,
): Cmd {
  const segment = source.slice(sc.start, sc.end);
  const subCmds: Cmd[] = [];
  const wordSubs = new Map<Word, Cmd[]>();
  const texts: string[] = [];
  for (const w of sc.words) texts.push(resolveWord(w, depth, out, subCmds, wordSubs));
  for (const a of sc.assignments) {
    resolveWord(a, depth, out, subCmds, wordSubs);
    trackAssignment(a, out);
  }
  if (sc.words.length > 1 && DECLARES.has(sc.words[0]!.text))
    for (const w of sc.words) trackAssignment(w, out);
  let stdinText: string | null = null;
  for (const r of sc.redirects) {
    if (r.target) {
      const text = resolveWord(r.target, depth, out, subCmds, wordSubs);
      if (r.op === '<<<') stdinText = text;
    }
    if (r.heredoc) {
      const cmds: Cmd[] = [];
      for (const sub of r.heredoc.subs) cmds.push(...analyzeScript(sub.source, depth + 1, [], out));
      subCmds.push(...cmds);
      if (r.target) wordSubs.set(r.target, [...(wordSubs.get(r.target) ?? []), ...cmds]);
      stdinText = r.heredoc.body;
    }
  }
  const base: Base = {
    redirects: sc.redirects,
    wrappers,
    viaXargs: false,
    inlineScript: false,
    stdinText,
    stdinJudged: false,
    subCmds,
    wordSubs,
    pipeline: [],
    stage: 0,
    segment,
    depth,
    cwd: out.cwd,
    downloads: out.downloads,
    dir: out.dir,
    env: out.env,
    foundBy: null,
    inlineUnjudged: null,
    inlineNet: null,
    vars: out.vars,
    netFds: out.netFds,
  };
  return emit(texts, sc.words, base, depth, out);
}

/**
 * Peels wrappers off `argv` and emits the command that runs, following nested scripts. Returns the
 * command that stands for this pipeline stage.
 */
function emit(argv: string[], words: Word[], base: Base, depth: number, out: Analysis): Cmd {
  let wrappers = base.wrappers;
  let viaXargs = base.viaXargs;
  let elevation: string[] | null = null;
  for (;;) {
    if (argv.length === 0) return push(newCmd(base, wrappers, viaXargs, argv, words, elevation), out);
    const name = basename(argv[0]!);
    if (isDynamic(argv[0]!, words[0]))
      return push(newCmd(base, wrappers, viaXargs, argv, words, elevation), out);
    const args = argv.slice(1);
    const spec = WRAPPERS[name];
    if (spec) {
      if (name === 'env') {
        const split = splitStringArg(args);
        if (split !== null) {
          const self = push(newCmd(base, wrappers, viaXargs, argv, words, elevation), out);
          analyzeScript(split, depth + 1, [...wrappers, 'env'], out);
          return self;
        }
      }
      const start = wrappedStart(name, spec, args);
      if (start < 0) return push(newCmd(base, wrappers, viaXargs, argv, words, elevation), out);
      if (spec.remote) {
        const self = push(newCmd(base, wrappers, viaXargs, argv, words, elevation), out);
        analyzeScript(args.slice(start).map(forReparse).join(' '), depth + 1, [...wrappers, name], out);
        return self;
      }
      wrappers = [...wrappers, name];
      if (spec.elevates) elevation = argv.slice(0, 1 + start);
      if (name === 'xargs') viaXargs = true;
      const replace = name === 'xargs' ? xargsReplace(args.slice(0, start)) : null;
      argv = argv.slice(1 + start);
      words = words.slice(1 + start);
      if (replace) argv = fillPlaceholder(argv, replace);
      continue;
    }
    const self = push(newCmd(base, wrappers, viaXargs, argv, words, elevation), out);
    if (SHELLS.has(name)) {
      const mode = shellMode(args);
      if (mode.mode === 'c' && mode.index < args.length) {
        self.inlineScript = true;
        analyzeScript(forReparse(args[mode.index]!), depth + 1, [...wrappers, name], out);
      } else if (mode.mode === 'c') {
        throw new MissingScriptError(`${name} -c is given no command string`);
      }
    } else if (name === 'su') {
      const i = args.findIndex((a) => a === '-c' || a === '--command' || a.startsWith('--command='));
      if (i >= 0) {
        const script = args[i]!.startsWith('--command=') ? args[i]!.slice(10) : args[i + 1];
        if (script !== undefined) {
          self.inlineScript = true;
          analyzeScript(forReparse(script), depth + 1, [...wrappers, 'su'], out);
        }
      }
    } else if (name === 'trap') {
      const action = trapAction(args);
      if (action !== null) {
        self.inlineScript = true;
        analyzeScript(forReparse(action), depth + 1, [...wrappers, 'trap'], out);
      }
    } else if (name === 'eval' && args.length > 0) {
      self.inlineScript = true;
      analyzeScript(args.map(forReparse).join(' '), depth + 1, [...wrappers, 'eval'], out);
    } else if (name === 'watch') {
      const rest = watchCommand(args);
      if (rest.length > 0) {
        self.inlineScript = true;
        analyzeScript(rest.map(forReparse).join(' '), depth + 1, [...wrappers, 'watch'], out);
      }
    } else if (name === 'find') {
      emitFindExec(self, argv, words, base, depth, out);
    } else {
      const code = inlineCode(name, args);
      if (code !== null) judgeInlineCode(self, code.family, code.code, depth, out);
    }
    return self;
  }
}

function newCmd(
  base: Base,
  wrappers: string[],
  viaXargs: boolean,
  argv: string[],
  words: Word[],
  elevation: readonly string[] | null,
): Cmd {
  const argv0 = argv[0] ?? '';
  return {
    name: argv0 === '' ? '' : basename(argv0),
    argv0,
    args: argv.slice(1),
    argWords: words.slice(1),
    redirects: base.redirects,
    wrappers,
    dynamicName: argv.length > 0 && isDynamic(argv0, words[0]),
    globName: argv.length > 0 && words[0]?.glob === true,
    viaXargs,
    inlineScript: false,
    stdinText: base.stdinText,
    stdinJudged: false,
    subCmds: base.subCmds,
    wordSubs: base.wordSubs,
    pipeline: base.pipeline,
    stage: base.stage,
    segment: base.segment,
    depth: base.depth,
    cwd: base.cwd,
    downloads: base.downloads,
    dir: base.dir,
    env: base.env,
    foundBy: base.foundBy,
    inlineUnjudged: null,
    inlineNet: null,
    elevation,
    vars: base.vars,
    netFds: base.netFds,
  };
}

/** `find ... -exec cmd {} ;` runs `cmd` once per file: judge it as a command of its own. */
function emitFindExec(find: Cmd, argv: string[], words: Word[], base: Base, depth: number, out: Analysis) {
  for (let i = 1; i < argv.length; i++) {
    if (!/^-(exec|execdir|ok|okdir)$/.test(argv[i]!)) continue;
    let end = i + 1;
    while (end < argv.length && argv[end] !== ';' && argv[end] !== '+') end++;
    if (end > i + 1) {
      emit(
        argv.slice(i + 1, end),
        words.slice(i + 1, end),
        { ...base, wrappers: [...find.wrappers, 'find'], foundBy: find },
        depth,
        out,
      );
    }
    i = end;
  }
}

/**
 * Inline interpreter code (`python -c`, `node -e`, `perl -e`...): the shell lines it runs and the
 * files it deletes or reads are judged as commands of their own; what cannot be read is noted.
 */
function judgeInlineCode(cmd: Cmd, family: string, code: readonly string[], depth: number, out: Analysis) {
  const scan = scanInlineCode(family, code);
  cmd.inlineUnjudged = scan.unjudged;
  cmd.inlineNet = scan.net;
  for (const script of scan.scripts) {
    try {
      analyzeScript(script, depth + 1, [...cmd.wrappers, cmd.name], out);
    } catch (error) {
      // A string that is not a whole shell line (an unbalanced quote): it cannot be judged.
      if (!(error instanceof ShellParseError) || error.code !== 'guard.shell_unbalanced') throw error;
      cmd.inlineUnjudged ??= 'it runs a shell line the guard cannot parse';
    }
  }
}

/** A shell reading literal text on stdin (`echo 'rm -rf /' | sh`, `bash <<EOF`) runs that text: judge it. */
function judgeStdinScript(cmd: Cmd, depth: number, out: Analysis) {
  if (cmd.stdinText === null) return;
  if (cmd.stdinText !== '' && cmd.inlineUnjudged === null) {
    const code = inlineCode(cmd.name, cmd.args, true);
    if (code !== null && code.code.length === 0)
      judgeInlineCode(cmd, code.family, [cmd.stdinText], depth, out);
  }
  const readsStdin =
    (SHELLS.has(cmd.name) && shellMode(cmd.args).mode === 'stdin') ||
    ((cmd.name === 'source' || cmd.name === '.') && cmd.args[0] === '/dev/stdin');
  if (!readsStdin) return;
  cmd.stdinJudged = true;
  analyzeScript(forReparse(cmd.stdinText), depth + 1, [...cmd.wrappers, cmd.name], out);
}

/**
 * A word's text with each substitution replaced by its output when that is a literal echo/printf
 * (`$(echo rm)` -> `rm`), else by UNKNOWN. Every substitution is analysed, its commands added to
 * `subCmds` and to the analysis.
 */
function resolveWord(
  w: Word,
  depth: number,
  out: Analysis,
  subCmds: Cmd[],
  wordSubs: Map<Word, Cmd[]>,
): string {
  if (w.subs.length === 0) return w.text;
  const values: string[] = [];
  const all: Cmd[] = [];
  wordSubs.set(w, all);
  for (const sub of w.subs) {
    const cmds = analyzeScript(sub.source, depth + 1, [], out);
    subCmds.push(...cmds);
    all.push(...cmds);
    const only = cmds.length === 1 ? cmds[0]! : null;
    const literal = sub.kind === 'cmd' && only ? literalOutput(only) : null;
    values.push(literal === null ? UNKNOWN : literal.replace(/\n+$/, ''));
  }
  let k = 0;
  return w.text.replace(new RegExp(SUB, 'g'), () => values[k++] ?? UNKNOWN);
}

/**
 * `xargs -I R cmd...`: each input line replaces R, so a command word holding R, or R in the script
 * a shell or eval is given, is known only at run time.
 */
function fillPlaceholder(argv: string[], replace: string): string[] {
  const fill = (text: string) => text.split(replace).join(UNKNOWN);
  const name = basename(argv[0] ?? '');
  if (SHELLS.has(name) || name === 'eval') return [fill(argv[0]!), ...argv.slice(1).map(fill)];
  return argv[0]?.includes(replace) ? [fill(argv[0]), ...argv.slice(1)] : argv;
}

/** Text handed to a nested shell: unknown substitutions become a variable so they stay dynamic. */
function forReparse(text: string): string {
  return text.includes(UNKNOWN) ? text.split(UNKNOWN).join(REPARSE_UNKNOWN) : text;
}

function isDynamic(text: string, word: Word | undefined): boolean {
  if (text.includes(UNKNOWN)) return true;
  return word?.dynamic === true && text.includes('$');
}

function push(cmd: Cmd, out: Analysis): Cmd {
  out.cmds.push(cmd);
  return cmd;
}
