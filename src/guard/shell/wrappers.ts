/**
 * Commands that run another command: `sudo rm -rf /` is `rm -rf /`. Each entry says which options
 * take a value and how many positional words come before the wrapped command, so the wrapped
 * command is found wherever it is, not only at the start of the line.
 */

export interface WrapperSpec {
  /** Short options that take the next word as value (or the rest of the word: `-n10`). */
  shortWithValue?: string;
  /** Long options that take the next word as value unless written `--opt=value`. */
  longWithValue?: string[];
  /** Positional words before the command (`timeout 10 cmd`, `chroot DIR cmd`). */
  positionals?: number;
  /** Options after which there is no command to run (`command -v x`, `sudo -l`). */
  noCommand?: string[];
  /** `nice -5 cmd`: a dash and digits is an option, not a command. */
  numericOption?: boolean;
  /** The wrapper itself changes who runs the command (matters at low trust). */
  elevates?: boolean;
  /** The wrapper runs the command elsewhere (ssh): still judged, never known-safe. */
  remote?: boolean;
}

export const WRAPPERS: Record<string, WrapperSpec> = {
  sudo: {
    shortWithValue: 'ugCDhprtUTR',
    longWithValue: [
      '--user',
      '--group',
      '--close-from',
      '--chdir',
      '--host',
      '--prompt',
      '--role',
      '--type',
      '--other-user',
      '--command-timeout',
      '--chroot',
    ],
    noCommand: [
      '-l',
      '--list',
      '-v',
      '--validate',
      '-k',
      '-K',
      '--reset-timestamp',
      '--remove-timestamp',
      '-e',
      '--edit',
      '-V',
      '--version',
      '-h',
      '--help',
    ],
    elevates: true,
  },
  doas: { shortWithValue: 'uC', elevates: true },
  run0: { shortWithValue: 'uDg', longWithValue: ['--user', '--chdir', '--group'], elevates: true },
  pkexec: { longWithValue: ['--user'], elevates: true },
  runuser: { shortWithValue: 'ugG', longWithValue: ['--user', '--group', '--supp-group'], elevates: true },
  timeout: { shortWithValue: 'sk', longWithValue: ['--signal', '--kill-after'], positionals: 1 },
  nice: { shortWithValue: 'n', longWithValue: ['--adjustment'], numericOption: true },
  ionice: {
    shortWithValue: 'cnp',
    longWithValue: ['--class', '--classdata', '--pid'],
    noCommand: ['-p', '--pid'],
  },
  nohup: {},
  exec: { shortWithValue: 'a' },
  command: { noCommand: ['-v', '-V'] },
  builtin: {},
  stdbuf: { shortWithValue: 'ioe', longWithValue: ['--input', '--output', '--error'] },
  time: { shortWithValue: 'fo', longWithValue: ['--format', '--output'] },
  setsid: {},
  env: { shortWithValue: 'uCS', longWithValue: ['--unset', '--chdir', '--split-string'] },
  xargs: {
    shortWithValue: 'adEILnPs',
    longWithValue: [
      '--arg-file',
      '--delimiter',
      '--eof',
      '--replace',
      '--max-lines',
      '--max-args',
      '--max-procs',
      '--max-chars',
      '--process-slot-var',
    ],
  },
  chroot: { longWithValue: ['--userspec', '--groups'], positionals: 1, elevates: true },
  busybox: {},
  unbuffer: {},
  caffeinate: { shortWithValue: 'tw' },
  flatpak_spawn: {},
  ssh: { shortWithValue: 'bcDEeFIiJLlmOopQRSWwB', positionals: 1, remote: true },
};

/** Shells whose `-c STRING` (also clustered: `-lc`, `-ec`) is a script we parse and judge. */
export const SHELLS = new Set([
  'sh',
  'bash',
  'zsh',
  'dash',
  'ksh',
  'mksh',
  'ash',
  'yash',
  'rbash',
  'fish',
  'csh',
  'tcsh',
]);

/** Interpreters that run code given on stdin, as `-c`/`-e` text, or from a file. */
export const INTERPRETER_CODE_FLAGS: Record<string, string[]> = {
  python: ['-c'],
  perl: ['-e', '-E'],
  ruby: ['-e'],
  node: ['-e', '--eval', '-p', '--print'],
  nodejs: ['-e', '--eval', '-p', '--print'],
  php: ['-r'],
  lua: ['-e'],
  deno: [],
  bun: ['-e', '--eval'],
  tclsh: [],
  pwsh: ['-c', '-command', '-Command'],
  powershell: ['-c', '-command', '-Command'],
  osascript: ['-e'],
  Rscript: ['-e'],
  R: ['-e'],
  irb: [],
  jshell: [],
  awk: [],
};

const families = new Map<string, string | null>();

/**
 * `python3.11` -> `python`, so the tables above need one entry per language. The rules ask it
 * four or five times for every command judged, five regular expressions each time: the answer is
 * kept per name (names of ordinary length, 512 at most).
 */
export function interpreterFamily(name: string): string | null {
  let family = families.get(name);
  if (family !== undefined) return family;
  family = familyOf(name);
  if (name.length <= 64) {
    if (families.size >= 512) families.clear();
    families.set(name, family);
  }
  return family;
}

function familyOf(name: string): string | null {
  if (SHELLS.has(name)) return 'shell';
  if (/^python[0-9.]*$/.test(name) || name === 'pypy' || name === 'pypy3') return 'python';
  if (/^perl[0-9.]*$/.test(name)) return 'perl';
  if (/^ruby[0-9.]*$/.test(name)) return 'ruby';
  if (/^php[0-9.]*$/.test(name)) return 'php';
  if (/^lua[0-9.]*$/.test(name) || name === 'luajit') return 'lua';
  return name in INTERPRETER_CODE_FLAGS && name !== 'awk' ? name : null;
}

/**
 * Where a wrapper's wrapped command starts in `args` (the words after the wrapper's name), or -1
 * when it wraps none. Leading `VAR=value` words (env) are skipped too.
 */
export function wrappedStart(name: string, spec: WrapperSpec, args: string[]): number {
  let positionals = spec.positionals ?? 0;
  let i = 0;
  while (i < args.length) {
    const a = args[i]!;
    if (a === '--') {
      i++;
      break;
    }
    // env, and sudo / doas (which pass `VAR=value` words to the command's environment).
    if ((name === 'env' || name === 'sudo' || name === 'doas') && /^[A-Za-z_][A-Za-z0-9_]*=/.test(a)) {
      i++;
      continue;
    }
    if (a.startsWith('-') && a.length > 1) {
      if (spec.noCommand?.includes(a) || spec.noCommand?.includes(a.split('=')[0]!)) return -1;
      if (spec.numericOption && /^-\d+$/.test(a)) {
        i++;
        continue;
      }
      if (a.startsWith('--')) {
        i += !a.includes('=') && spec.longWithValue?.includes(a) ? 2 : 1;
        continue;
      }
      // A cluster such as `-oL` or `-un`: the first letter that takes a value swallows the rest of
      // the word, or the next word when it is the cluster's last letter.
      let takesNext = false;
      for (let k = 1; k < a.length; k++) {
        if (spec.shortWithValue?.includes(a[k]!)) {
          if (spec.noCommand?.includes(`-${a[k]}`)) return -1;
          takesNext = k === a.length - 1;
          break;
        }
        if (spec.noCommand?.includes(`-${a[k]}`)) return -1;
      }
      i += takesNext ? 2 : 1;
      continue;
    }
    if (positionals > 0) {
      positionals--;
      i++;
      continue;
    }
    return i;
  }
  // `--` reached: the next word, if any, is the command (after any positionals still owed).
  i += positionals;
  return i < args.length ? i : -1;
}

/**
 * For a shell's arguments: the `-c` script, or the file it runs, or that it reads stdin.
 */
export function shellMode(
  args: string[],
): { mode: 'c'; index: number } | { mode: 'file'; index: number } | { mode: 'stdin' } {
  let c = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--' || a === '-') {
      if (a === '-') return { mode: 'stdin' };
      const next = i + 1;
      if (next >= args.length) return c ? { mode: 'c', index: next } : { mode: 'stdin' };
      return c ? { mode: 'c', index: next } : { mode: 'file', index: next };
    }
    if (a === '-o' || a === '+o' || a === '-O' || a === '+O' || a === '--rcfile' || a === '--init-file') {
      i++;
      continue;
    }
    if (a.startsWith('--')) continue;
    if ((a.startsWith('-') || a.startsWith('+')) && a.length > 1) {
      if (a.includes('c')) c = true;
      if (a.includes('s') && !c) return { mode: 'stdin' };
      continue;
    }
    return c ? { mode: 'c', index: i } : { mode: 'file', index: i };
  }
  // `bash -c` with no string: index past the end (bash refuses it; the guard denies it).
  return c ? { mode: 'c', index: args.length } : { mode: 'stdin' };
}
