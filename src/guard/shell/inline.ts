/**
 * Inline interpreter code: `python -c`, `node -e`, `perl -e`, `ruby -e`, `php -r` (and the same
 * code fed on stdin). The code is scanned, not run: its shell-outs (`os.system`, `subprocess`,
 * `child_process`, `system`, `exec`, backticks...) become the shell lines they run where those
 * are literal strings, its deletes (`shutil.rmtree`, `fs.rmSync`, `unlink`, `FileUtils.rm_rf`...)
 * become the `rm` they amount to, and string literals naming credential files become a `cat` of
 * them. Code that calls out in a way that cannot be read (a command built at run time, `eval`,
 * `__import__`) is reported as unjudged.
 */
import { type Family, type Literal, lexCode, literalArgs, sq } from './inline-lexer.ts';
import { type InlineNet, scanNetwork } from './inline-risk.ts';
import { memo, SECRET_FILE } from './paths.ts';

export type { Family } from './inline-lexer.ts';

/** Options whose next word (or, for perl/ruby clusters such as `-ne`, the next word after the cluster) is code. */
const CODE_LETTERS: Record<Family, string> = {
  python: 'c',
  node: 'ep',
  perl: 'eE',
  ruby: 'e',
  php: 'r',
  awk: '',
};
const NODE_LONG = new Set(['--eval', '--print']);
/** Options that take a value, so the word after them is neither code nor a script. */
const WITH_VALUE: Record<Family, ReadonlySet<string>> = {
  python: new Set(['-W', '-X', '-Q']),
  node: new Set([
    '-r',
    '--require',
    '--import',
    '--loader',
    '--experimental-loader',
    '--input-type',
    '-C',
    '--conditions',
  ]),
  perl: new Set(['-I', '-M', '-m', '-x']),
  ruby: new Set(['-I', '-r', '-C', '-E', '-F']),
  php: new Set(['-c', '-d', '-z']),
  awk: new Set(['-F', '-v', '--field-separator', '--assign', '-i', '--include', '-l', '--load']),
};

/** Short options whose value is glued on (`-rjson`, `-Mstrict`): the cluster is not a code option. */
const GLUED: Record<Family, string> = {
  python: 'WX',
  node: '',
  perl: 'IMmx',
  ruby: 'rICEFK',
  php: 'dc',
  awk: 'Fv',
};

const familyOf: (name: string) => Family | null = memo(familyOfName, 512);

function familyOfName(name: string): Family | null {
  if (/^python[0-9.]*$/.test(name) || name === 'pypy' || name === 'pypy3') return 'python';
  if (name === 'node' || name === 'nodejs' || name === 'bun') return 'node';
  if (/^perl[0-9.]*$/.test(name)) return 'perl';
  if (/^ruby[0-9.]*$/.test(name)) return 'ruby';
  if (/^php[0-9.]*$/.test(name)) return 'php';
  if (/^[gmn]?awk$/.test(name)) return 'awk';
  return null;
}

/**
 * The code an interpreter is given on its command line, or null when it is not one of these
 * interpreters or runs a script file / module. With `stdin`, an interpreter that reads its code
 * from stdin (no code option, no script) gives `{ code: [] }`.
 */
export function inlineCode(
  name: string,
  args: readonly string[],
  stdin = false,
): { family: Family; code: string[] } | null {
  const family = familyOf(name);
  if (family === null) return null;
  if (family === 'awk') return awkProgram(args);
  const code: string[] = [];
  const letters = CODE_LETTERS[family];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '-' || a === '--') break;
    if (family === 'node' && (NODE_LONG.has(a) || /^--(eval|print)=/.test(a))) {
      if (a.includes('=')) code.push(a.slice(a.indexOf('=') + 1));
      else if (args[i + 1] !== undefined) code.push(args[++i]!);
      continue;
    }
    if (a.startsWith('--')) {
      if (!a.includes('=') && WITH_VALUE[family].has(a)) i++;
      continue;
    }
    if (a.startsWith('-') && a.length > 1) {
      if (family === 'python' && a === '-m') return null;
      if (WITH_VALUE[family].has(a)) {
        i++;
        continue;
      }
      const last = a[a.length - 1]!;
      if (/^-[A-Za-z]+$/.test(a) && !GLUED[family].includes(a[1]!) && letters.includes(last)) {
        if (args[i + 1] !== undefined) code.push(args[++i]!);
        // python, node, php: the code ends the options; later words are the program's arguments.
        if (family === 'python' || family === 'php') break;
      }
      continue;
    }
    // A script file (or `python -m mod`, handled above): its arguments follow.
    if (code.length === 0 && !(family === 'node' && name === 'bun' && a === 'run')) return null;
    break;
  }
  if (code.length > 0) return { family, code };
  return stdin ? { family, code: [] } : null;
}

/** awk's program: its first operand, unless -f / -E name a program file. */
function awkProgram(args: readonly string[]): { family: Family; code: string[] } | null {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') return args[i + 1] === undefined ? null : { family: 'awk', code: [args[i + 1]!] };
    if (/^(-f|-E|--file|--exec)(=|$)/.test(a) || /^-[fE]./.test(a)) return null;
    if (a.startsWith('-') && a.length > 1) {
      if (WITH_VALUE.awk.has(a)) i++;
      continue;
    }
    return { family: 'awk', code: [a] };
  }
  return null;
}

export interface InlineScan {
  /** Shell lines the code runs, or amounts to (`rm -r 'x'` for shutil.rmtree("x")), to judge. */
  scripts: string[];
  /** Why part of the code cannot be judged, or null. */
  unjudged: string | null;
  /** What the code does with the network, or null when it opens no connection. */
  net: InlineNet | null;
}

/** Shell-outs whose first argument is a command line or an argv list. */
const SHELL_CALLS: Record<Family, RegExp> = {
  python:
    /(?<![\w.])(?:os\s*\.\s*)?(?:system|popen[234]?)\s*\(|\bsubprocess\s*\.\s*(?:run|call|check_call|check_output|Popen|getoutput|getstatusoutput)\s*\(|(?<![\w.])(?:check_call|check_output|getoutput|getstatusoutput|Popen)\s*\(|\bos\s*\.\s*(?:exec|spawn)[lv]p?e?\s*\(|\bpty\s*\.\s*spawn\s*\(/g,
  node: /(?<![\w$])(?:[\w$]+\s*\.\s*)?(?:execSync|execFileSync|spawnSync|execFile|spawn|exec)\s*\(/g,
  perl: /(?<![\w$@%>:])(?:system|exec|readpipe)\b\s*\(?/g,
  ruby: /(?<![\w.:])(?:Kernel\s*\.\s*)?(?:system|exec|spawn)\s*\(?|\b(?:IO\s*\.\s*popen|Open3\s*\.\s*(?:capture2e?|capture3|popen3|popen2e?)|Process\s*\.\s*spawn)\s*\(?/g,
  php: /(?<![\w$>:])(?:system|exec|shell_exec|passthru|popen|proc_open|pcntl_exec)\s*\(/g,
  awk: /(?<![\w$])system\s*\(/g,
};

/** Deletes, as the rm they amount to: group 1 is the call, `recursive` when it removes trees. */
const DELETE_CALLS: Record<Family, RegExp> = {
  python: /(?<![\w])(?:shutil\s*\.\s*)?(rmtree)\s*\(|\bos\s*\.\s*(remove|unlink|rmdir|removedirs)\s*\(/g,
  node: /(?<![\w$])(?:[\w$]+\s*\.\s*)?(rmSync|rmdirSync|unlinkSync|rm|rmdir|unlink)\s*\(/g,
  perl: /(?<![\w$@%>:])(rmtree|remove_tree|unlink|rmdir)\b\s*\(?/g,
  ruby: /\b(?:FileUtils\s*\.\s*(rm_rf|rm_r|remove_dir|remove_entry(?:_secure)?|rm_f|rm|remove)|File\s*\.\s*(delete|unlink)|Dir\s*\.\s*(rmdir|delete))\s*\(?/g,
  php: /(?<![\w$>:])(unlink|rmdir)\s*\(/g,
  awk: /(?!)/g,
};
const RECURSIVE_DELETE = /^(rmtree|remove_tree|rm_rf|rm_r|remove_dir|remove_entry|remove_entry_secure)$/;

/** Running code built at run time, or reaching the shell through a door the scan does not follow. */
const DYNAMIC: Record<Family, RegExp> = {
  python:
    /(?<![\w.])(?:eval|exec|compile|__import__|getattr|globals|vars)\s*\(|\bimportlib\b|\bb(?:64|32|16|85)decode\b|\bcodecs\s*\.\s*decode\b|\bctypes\b|\bmarshal\b|\bpickle\s*\.\s*loads\b/,
  node: /(?<![\w$.])(?:eval|Function)\s*\(|(?<![\w$.])(?:require|import)\s*\((?!\s*(['"`])\s*\1\s*\))|\bnew\s+Function\b|\bvm\s*\.\s*run|\bBuffer\s*\.\s*from\s*\([^)]*base64|\batob\s*\(|\bprocess\s*\.\s*binding\b|\bBun\s*\.\s*(?:spawn|\$)|\bDeno\s*\.\s*(?:Command|run)\b/,
  perl: /(?<![\w$@%>:])eval\b|\bdo\s*['"$]|\brequire\s*\$|\bdecode_base64\b|\bpack\s*\(|&\s*\$/,
  ruby: /(?<![\w.])(?:eval|instance_eval|class_eval|module_eval|send|public_send|__send__|const_get|method)\b|(?<![\w.])(?:load|require)\b(?!\s*\(?\s*(['"])\s*\1)|\bBase64\b|\bunpack1?\b/,
  php: /(?<![\w$>:])(?:eval|assert|create_function|call_user_func(?:_array)?|preg_replace_callback|include|require(?:_once)?|base64_decode|str_rot13|gzinflate)\s*\(|\$\w+\s*\(/,
  awk: /(?!)/,
};
/** Names that show a shell-out is meant even when no call above was recognised (an alias, a method reference). */
const SHELL_MODULES: Record<Family, RegExp> = {
  python:
    /\b(subprocess|os\s*\.\s*(system|popen|exec|spawn|fork)|pty|commands|asyncio\s*\.\s*create_subprocess|multiprocessing)\b/,
  node: /\b(child_process|execSync|spawnSync|execFile|worker_threads|cluster)\b/,
  perl: /\b(system|exec|fork|IPC::|open\s*\(?[^;]*\|)/,
  ruby: /\b(system|exec|spawn|Open3|IO\s*\.\s*popen|fork|PTY)\b/,
  php: /\b(system|exec|shell_exec|passthru|popen|proc_open|pcntl_exec|mail)\b/,
  awk: /(?<![\w$])system\b|\w\s*\|\s*getline|(?<!\|)\|(?!\|)\s*[A-Za-z_$(]/,
};

const PY_SHELL_NAMES =
  /^(run|call|check_call|check_output|Popen|getoutput|getstatusoutput|system|popen[234]?|spawn[lv]?p?e?|exec[lv]p?e?)$/;
const PY_DELETE_NAMES = /^(rmtree|remove|unlink|rmdir|removedirs)$/;

interface Site {
  /** Index just past the call's name (and its `(`, when written). */
  at: number;
  label: string;
  recursive: boolean;
  /** awk's `print ... | "cmd"`: the command reads what the program prints. */
  piped?: boolean;
}

/**
 * Python's renamed imports: `import subprocess as sp` then `sp.run(...)`, `from os import system`
 * then `system(...)`, `from shutil import rmtree as nuke` then `nuke(...)`.
 */
function pythonAliased(masked: string): { shell: Site[]; deletes: Site[] } {
  const shell: Site[] = [];
  const deletes: Site[] = [];
  if (!/\bimport\b/.test(masked)) return { shell, deletes };
  const modules: string[] = [];
  for (const m of masked.matchAll(/(?:\bimport|,)\s*(subprocess|os|shutil|pty|posix)\s+as\s+(\w+)/g))
    modules.push(m[2]!);
  const names = new Map<string, string>();
  for (const m of masked.matchAll(/\bfrom\s+(subprocess|os|shutil|pty|posix)\s+import\s+\(?([\w\s,]+)/g)) {
    for (const part of m[2]!.split(',')) {
      const [name, alias] = part.trim().split(/\s+as\s+/);
      if (name) names.set(alias?.trim() || name, name);
    }
  }
  if (modules.length > 0) {
    const re = new RegExp(`(?<![\\w.])(?:${modules.join('|')})\\s*\\.\\s*(\\w+)\\s*\\(`, 'g');
    for (const m of masked.matchAll(re)) {
      const site = {
        at: m.index + m[0].length,
        label: m[0].replace(/[\s(]+$/, ''),
        recursive: m[1] === 'rmtree',
      };
      if (PY_SHELL_NAMES.test(m[1]!)) shell.push(site);
      else if (PY_DELETE_NAMES.test(m[1]!)) deletes.push(site);
    }
  }
  for (const [alias, name] of names) {
    if (!PY_SHELL_NAMES.test(name) && !PY_DELETE_NAMES.test(name)) continue;
    for (const m of masked.matchAll(new RegExp(`(?<![\\w.])${alias}\\s*\\(`, 'g'))) {
      const site = { at: m.index + m[0].length, label: alias, recursive: name === 'rmtree' };
      (PY_SHELL_NAMES.test(name) ? shell : deletes).push(site);
    }
  }
  return { shell, deletes };
}

/** The shell-out and delete call sites of one piece of code, by its family's tables. */
function callSites(
  family: Family,
  text: string,
  masked: string,
  literals: readonly Literal[],
): { shell: Site[]; deletes: Site[] } {
  const shell: Site[] = [];
  const deletes: Site[] = [];
  // In JavaScript exec/spawn are child_process's only where child_process is loaded (RegExp#exec is not).
  const childProcess = family !== 'node' || /child_process/.test(text);
  for (const m of masked.matchAll(SHELL_CALLS[family])) {
    if (!childProcess && !/Sync\s*\($/.test(m[0])) continue;
    shell.push({ at: m.index + m[0].length, label: m[0].replace(/[\s(]+$/, ''), recursive: false });
  }
  for (const m of masked.matchAll(DELETE_CALLS[family])) {
    const call = m[1] ?? m[2] ?? m[3] ?? '';
    const after = masked.slice(m.index + m[0].length, m.index + m[0].length + 300);
    const recursive =
      RECURSIVE_DELETE.test(call) ||
      (family === 'node' && /^(rm|rmSync|rmdir|rmdirSync)$/.test(call) && /recursive\s*:\s*true/.test(after));
    deletes.push({ at: m.index + m[0].length, label: call, recursive });
  }
  if (family === 'awk') {
    // "cmd" | getline and print ... | "cmd": the literal string is a shell line.
    for (const l of literals) {
      const after = masked.slice(l.end, l.end + 40);
      const before = masked.slice(Math.max(0, l.start - 40), l.start);
      if (/^\s*\|&?\s*getline/.test(after))
        shell.push({ at: l.start, label: 'awk getline', recursive: false });
      else if (/(?<!\|)\|&?\s*$/.test(before))
        shell.push({ at: l.start, label: 'awk print pipe', recursive: false, piped: true });
    }
  }
  if (family === 'python') {
    const aliased = pythonAliased(masked);
    // A site both tables found (`os.system` is also `system`) is judged once.
    const seen = new Set([...shell, ...deletes].map((x) => x.at));
    for (const x of aliased.shell) if (!seen.has(x.at)) shell.push(x);
    for (const x of aliased.deletes) if (!seen.has(x.at)) deletes.push(x);
  }
  return { shell, deletes };
}

export function scanInlineCode(familyName: string, code: readonly string[]): InlineScan {
  const family = familyName as Family;
  const scripts: string[] = [];
  let unjudged: string | null = null;
  let net: InlineNet | null = null;
  for (const text of code) {
    const { masked, literals, backticks } = lexCode(family, text);
    const n = scanNetwork(family, masked, literals);
    if (n) {
      net ??= { shell: false, environment: false, files: [] };
      net.shell ||= n.shell;
      net.environment ||= n.environment;
      net.files.push(...n.files);
    }
    const sites = callSites(family, text, masked, literals);
    let calls = sites.shell.length + backticks.length;
    for (const site of sites.shell) {
      const args = literalArgs(masked, literals, site.at);
      if (args === null) {
        unjudged ??= `${site.label} is given a command built at run time`;
        // Code that talks to the network and runs commands it builds runs what the peer sends.
        if (n) net!.shell = true;
        continue;
      }
      // One string is a command line; several words (or a list) are an argv.
      const line = args.length === 1 ? args[0]! : args.map((w, k) => (k === 0 ? sq(w) : w)).join(' ');
      scripts.push(site.piped ? `cat | ${line}` : line);
    }
    for (const b of backticks) scripts.push(b.value);
    // perl qx{...} / qx(...), ruby %x(...): shell-outs with their own delimiters.
    if (family === 'perl' || family === 'ruby') {
      for (const m of masked.matchAll(family === 'perl' ? /\bqx\s*([^\w\s])/g : /%x([^\w\s])/g)) {
        calls++;
        const open = m[1]!;
        const close = ({ '{': '}', '(': ')', '[': ']', '<': '>' } as Record<string, string>)[open] ?? open;
        const from = m.index + m[0].length;
        const to = text.indexOf(close, from);
        const body = text.slice(from, to < 0 ? text.length : to);
        scripts.push(body.replace(/\$\w+|@\w+|#\{[^}]*\}/g, '$X'));
      }
    }
    for (const site of sites.deletes) {
      const args = literalArgs(masked, literals, site.at);
      const targets = args === null ? ['$X'] : args.map((a) => (a.includes('$X') ? a : sq(a)));
      scripts.push(`rm ${site.recursive ? '-r ' : ''}-- ${targets.join(' ')}`);
    }
    const secrets = literals.filter((l) => !l.dynamic && SECRET_FILE.test(l.value)).map((l) => sq(l.value));
    if (secrets.length > 0) scripts.push(`cat -- ${secrets.join(' ')}`);
    if (DYNAMIC[family].test(masked))
      unjudged ??= 'it runs code built at run time (eval, exec, __import__, decoding)';
    else if (calls === 0 && SHELL_MODULES[family].test(masked))
      unjudged ??= 'it reaches the shell through a call the guard does not follow';
  }
  return { scripts, unjudged, net };
}
