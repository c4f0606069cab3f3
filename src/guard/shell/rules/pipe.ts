/**
 * Pipe-to-shell and obfuscation: code fetched from the network or decoded from an opaque blob and
 * run without anyone reading it (`curl ... | sh`, `bash <(curl ...)`, `eval "$(base64 -d ...)"`).
 */
import type { Cmd } from '../cmd.ts';
import { flags, type ShellRule } from '../match.ts';
import type { Word } from '../tokenizer.ts';
import { basename } from '../words.ts';
import { INTERPRETER_CODE_FLAGS, interpreterFamily, shellMode } from '../wrappers.ts';

/** Commands whose output is content from the network. */
const FETCHERS = new Set([
  'curl',
  'wget',
  'fetch',
  'http',
  'https',
  'httpie',
  'xh',
  'aria2c',
  'lynx',
  'links',
  'w3m',
  'nc',
  'ncat',
  'netcat',
  'socat',
  'ftp',
  'tftp',
  'iwr',
  'invoke-webrequest',
]);

function isFetcher(c: Cmd): boolean {
  if (FETCHERS.has(c.name) || c.subCmds.some(isFetcher)) return true;
  // `curl${IFS}x`: a name spliced with a variable is still that command.
  if (c.dynamicName) for (const f of FETCHERS) if (c.argv0.startsWith(`${f}$`)) return true;
  return false;
}

/** Commands that turn an opaque blob into text (base64 -d, xxd -r, openssl enc -d, rev). */
function isDecoder(c: Cmd): boolean {
  const f = flags(c);
  switch (c.name) {
    case 'base64':
    case 'base32':
    case 'basenc':
      return f.short.has('d') || f.short.has('D') || f.long.has('--decode');
    case 'xxd':
      return f.short.has('r') || f.long.has('--revert');
    case 'openssl':
      return f.short.has('d') || c.args[0] === 'base64' || c.args.includes('-base64');
    case 'uudecode':
    case 'rev':
      return true;
    case 'python':
    case 'python3':
      return c.args.includes('base64') && f.short.has('d');
    default:
      return c.subCmds.some(isDecoder);
  }
}

/** Also decoders: `echo <blob> | base64 -d`. A pipeline stage before `stage` that fetches / decodes. */
function upstream(c: Cmd, test: (s: Cmd) => boolean): boolean {
  for (let i = 0; i < c.stage; i++) if (test(c.pipeline[i]!)) return true;
  return false;
}

/** The interpreter runs code from its stdin (no script file, no -c / -e code). */
export function readsCodeFromStdin(c: Cmd): boolean {
  if (c.name === 'source' || c.name === '.') return c.args[0] === '/dev/stdin' || c.args[0] === '-';
  const family = interpreterFamily(c.name);
  if (family === null) return false;
  if (family === 'shell') {
    const mode = shellMode(c.args);
    return (
      mode.mode === 'stdin' ||
      (mode.mode === 'file' &&
        /^(-|\/dev\/stdin|\/dev\/fd\/0|\/proc\/self\/fd\/0)$/.test(c.args[mode.index]!))
    );
  }
  const codeFlags = INTERPRETER_CODE_FLAGS[family] ?? [];
  for (let i = 0; i < c.args.length; i++) {
    const a = c.args[i]!;
    if (codeFlags.includes(a) || a === '-m' || a === '--version' || a === '-V') return false;
    if (a === '-' || a === '/dev/stdin') return true;
    if (!a.startsWith('-')) return false;
  }
  return true;
}

/**
 * The words an interpreter runs as code: its -c / -e text, the script file it runs (`bash <(curl
 * ...)`), `eval`'s arguments, and what its stdin is redirected from. Other arguments are data for
 * the script (`python3 tool.py "$(curl api)"` is not remote code).
 */
function codeWords(c: Cmd): Word[] {
  const words: Word[] = [];
  for (const r of c.redirects)
    if (r.target && (r.op === '<' || r.op === '<<<' || r.heredoc)) words.push(r.target);
  if (c.name === 'eval') return [...words, ...c.argWords];
  if (c.name === 'source' || c.name === '.') return c.argWords[0] ? [...words, c.argWords[0]] : words;
  const family = interpreterFamily(c.name);
  if (family === null) return words;
  if (family === 'shell') {
    const mode = shellMode(c.args);
    if (mode.mode !== 'stdin' && c.argWords[mode.index]) words.push(c.argWords[mode.index]!);
    return words;
  }
  const codeFlags = INTERPRETER_CODE_FLAGS[family] ?? [];
  for (let i = 0; i < c.args.length; i++) {
    const a = c.args[i]!;
    if (codeFlags.includes(a)) {
      if (c.argWords[i + 1]) words.push(c.argWords[i + 1]!);
      return words;
    }
    if (!a.startsWith('-')) {
      words.push(c.argWords[i]!);
      return words;
    }
  }
  return words;
}

function codeCommands(c: Cmd): Cmd[] {
  if (c.wordSubs.size === 0) return [];
  return codeWords(c).flatMap((w) => c.wordSubs.get(w) ?? []);
}

const isInterpreter = (c: Cmd) =>
  c.name === 'eval' || c.name === 'source' || c.name === '.' || interpreterFamily(c.name) !== null;

/** The file an interpreter runs, or the command's own name when it is run as a program (`./install.sh`). */
function programFile(c: Cmd): string | null {
  if (c.name === 'source' || c.name === '.') return c.args[0] ?? null;
  const family = interpreterFamily(c.name);
  if (family === null) return c.argv0.includes('/') ? c.argv0 : null;
  if (family === 'shell') {
    const mode = shellMode(c.args);
    return mode.mode === 'file' ? (c.args[mode.index] ?? null) : null;
  }
  const codeFlags = INTERPRETER_CODE_FLAGS[family] ?? [];
  for (const a of c.args) {
    if (codeFlags.includes(a) || a === '-m') return null;
    if (!a.startsWith('-')) return a;
  }
  return null;
}

export const PIPE_RULES: ShellRule[] = [
  {
    id: 'shell.pipe.remote_to_interpreter',
    severity: 'catastrophic',
    reason: 'Runs code downloaded from the network without reading it (curl ... | sh).',
    suggestion:
      'Download to a file, read it, then run it deliberately; or install through a package manager.',
    match: (c) => isInterpreter(c) && readsCodeFromStdin(c) && upstream(c, isFetcher),
  },
  {
    id: 'shell.pipe.remote_code_argument',
    severity: 'catastrophic',
    reason:
      'Runs code downloaded from the network without reading it (bash <(curl ...), eval "$(curl ...)", sh -c "$(wget -O- ...)").',
    suggestion:
      'Download to a file, read it, then run it deliberately; or install through a package manager.',
    match: (c) => isInterpreter(c) && codeCommands(c).some(isFetcher),
  },
  {
    id: 'shell.pipe.download_then_run',
    severity: 'catastrophic',
    reason: 'Runs a file the same command line downloaded or decoded (curl -o x.sh ... && sh x.sh).',
    suggestion: 'Download in one step, read the file, then run it deliberately in another.',
    match: (c) => {
      if (c.downloads.size === 0 || FETCHERS.has(c.name)) return false;
      const file = programFile(c);
      return file !== null && c.downloads.has(basename(file));
    },
  },
  {
    id: 'shell.pipe.decoded_to_interpreter',
    severity: 'catastrophic',
    reason: 'Runs code decoded from an opaque blob (base64 -d | sh): nobody can see what it does.',
    suggestion: 'Run the decoded commands as plain text so they can be checked.',
    match: (c) =>
      isInterpreter(c) &&
      ((readsCodeFromStdin(c) && upstream(c, isDecoder)) || codeCommands(c).some(isDecoder)),
  },
  {
    id: 'shell.pipe.stdin_to_interpreter',
    severity: 'risky',
    reason: 'Pipes unseen text into an interpreter as code.',
    suggestion: 'Run the script file directly (bash script.sh) so it is clear what runs.',
    match: (c) => c.stage > 0 && !c.stdinJudged && isInterpreter(c) && readsCodeFromStdin(c),
  },
  {
    id: 'shell.obfuscation.dynamic_command',
    severity: 'risky',
    reason: 'The command to run is built from a variable or substitution, so it cannot be checked.',
    suggestion: 'Name the command literally.',
    match: (c) => c.dynamicName,
  },
  {
    id: 'shell.obfuscation.eval_dynamic',
    severity: 'risky',
    commands: ['eval'],
    reason: 'eval runs text that is only known at run time.',
    suggestion: 'Run the command directly instead of through eval.',
    match: (c) => c.argWords.some((w) => w.dynamic),
  },
];
