/**
 * Exfiltration: a local file outside the workspace, or the whole environment, sent to the network
 * by any client (curl upload and data flags, wget --post-file, httpie, nc/socat/telnet/ssh fed on
 * stdin, scp and rsync to a remote, a /dev/tcp redirect, inline interpreter code). Credential files
 * are read_secrets' (filesystem.ts) whoever sends them; files in the workspace and /tmp may be
 * uploaded, and so may the few files that only describe the host (os-release, hostname).
 */
import type { Cmd } from '../cmd.ts';
import { flags, positionals, type ShellRule, writeTargets } from '../match.ts';
import { normalizePath } from '../paths.ts';
import { outsideWorkspace, pathsOf } from '../places.ts';

/** Host facts any bug report carries. */
const PUBLIC_FACTS =
  /^\/(etc\/(hostname|os-release|lsb-release|issue|issue\.net|timezone|localtime|debian_version|redhat-release|alpine-release)|usr\/lib\/os-release|proc\/(version|cpuinfo|meminfo|loadavg|uptime))$/;

/** Clients that send their standard input to the connection. */
const STREAM_CLIENTS = new Set(['nc', 'ncat', 'netcat', 'telnet', 'cryptcat', 'ssh', 'sftp', 'ftp', 'tftp']);
const HTTPIE = new Set(['http', 'https', 'httpie', 'xh', 'xhs']);
const COPY_CLIENTS = new Set(['scp', 'rsync', 'sftp']);
const SCP_WITH_VALUE = new Set([
  '-i',
  '-P',
  '-p',
  '-o',
  '-F',
  '-c',
  '-l',
  '-S',
  '-J',
  '-e',
  '--rsh',
  '-D',
  '-X',
]);
const CURL_DATA = new Set(['-d', '--data', '--data-binary', '--data-ascii', '--data-urlencode', '--json']);
const CURL_FORM = new Set(['-F', '--form']);
const CURL_UPLOAD = new Set(['-T', '--upload-file']);
/** curl's short options that take a value, so a cluster ending with one takes the next word. */
const CURL_SHORT_VALUE = 'oHXuAexwKbcErmCyYzQUPtTdF';

/** What a client sends: named files, and whether its standard input goes too. */
interface Sent {
  files: string[];
  stdin: boolean;
}

function curlSends(c: Cmd): Sent {
  const s: Sent = { files: [], stdin: false };
  const take = (opt: string, v: string | undefined) => {
    if (v === undefined) return;
    let file: string | null = null;
    if (CURL_UPLOAD.has(opt)) file = v;
    else if (CURL_DATA.has(opt)) {
      const at = opt === '--data-urlencode' ? v.indexOf('@') : v.startsWith('@') ? 0 : -1;
      if (at >= 0) file = v.slice(at + 1);
    } else if (CURL_FORM.has(opt)) {
      const m = /^[^=]*=[@<]([^;]*)/.exec(v);
      if (m) file = m[1]!;
    }
    if (file === '-' || file === '.') s.stdin = true;
    else if (file) s.files.push(file);
  };
  for (let i = 0; i < c.args.length; i++) {
    const a = c.args[i]!;
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      const opt = eq > 0 ? a.slice(0, eq) : a;
      if (CURL_UPLOAD.has(opt) || CURL_DATA.has(opt) || CURL_FORM.has(opt))
        take(opt, eq > 0 ? a.slice(eq + 1) : c.args[++i]);
      continue;
    }
    if (!a.startsWith('-') || a.length < 2) continue;
    for (let k = 1; k < a.length; k++) {
      const letter = a[k]!;
      if (!CURL_SHORT_VALUE.includes(letter)) continue;
      const value = k < a.length - 1 ? a.slice(k + 1) : c.args[++i];
      if ('TdF'.includes(letter)) take(`-${letter}`, value);
      break;
    }
  }
  return s;
}

/** What a network client sends, or null when the command is not one. */
function sends(c: Cmd): Sent | null {
  const name = c.name;
  if (name === 'curl') return curlSends(c);
  if (name === 'wget') {
    const files: string[] = [];
    for (let i = 0; i < c.args.length; i++) {
      const m = /^--(post-file|body-file)(=(.*))?$/.exec(c.args[i]!);
      if (m) files.push(m[2] ? m[3]! : (c.args[++i] ?? ''));
    }
    return { files, stdin: false };
  }
  if (HTTPIE.has(name)) {
    const files = flags(c)
      .positionals.filter((a) => !a.includes('://'))
      .map((a) => /^(?:[\w.\-[\]]*(?::=|=)?)?@(.+)$/.exec(a)?.[1])
      .filter((f): f is string => f !== undefined);
    return { files, stdin: false };
  }
  if (name === 'socat') {
    const files: string[] = [];
    let stdin = false;
    for (const a of flags(c).positionals) {
      const m = /^(FILE|OPEN|GOPEN|READLINE):([^,]*)/i.exec(a);
      if (m) files.push(m[2]!);
      else if (/^(-|STDIN|STDIO)(,|$)/i.test(a)) stdin = true;
    }
    return { files, stdin };
  }
  if (name === 'openssl') return c.args[0] === 's_client' ? { files: [], stdin: true } : null;
  if (COPY_CLIENTS.has(name) && name !== 'sftp') {
    const p = positionals(c.args, SCP_WITH_VALUE);
    const remote = (a: string) => /^[^/]*:/.test(a) || a.startsWith('rsync://');
    if (p.length < 2 || !remote(p[p.length - 1]!)) return { files: [], stdin: false };
    return { files: p.slice(0, -1).filter((a) => !remote(a)), stdin: false };
  }
  if (STREAM_CLIENTS.has(name)) return { files: [], stdin: true };
  if (STORAGE_CLIENTS.has(name)) return storageSends(c);
  return null;
}

/** Object-storage CLIs: `aws s3 cp|mv|sync SRC s3://...`, `gsutil cp SRC gs://...`, `rclone copy SRC remote:`. */
const STORAGE_CLIENTS = new Set(['aws', 'gsutil', 'gcloud', 'rclone', 'azcopy']);
const STORAGE_URL = /^(s3|gs|az|https?):\/\/|^[\w-]+:(?!\/\/)/;

function storageSends(c: Cmd): Sent {
  const p = flags(c).positionals;
  let i = 0;
  if (c.name === 'aws') i = p[0] === 's3' ? 1 : p.length;
  else if (c.name === 'gcloud') i = p[0] === 'storage' ? 1 : p.length;
  if (!/^(cp|mv|sync|rsync|copy|copyto|move|moveto)$/.test(p[i] ?? '')) return { files: [], stdin: false };
  const operands = p.slice(i + 1);
  const dest = operands[operands.length - 1];
  if (operands.length < 2 || !STORAGE_URL.test(dest!)) return { files: [], stdin: false };
  return { files: operands.slice(0, -1).filter((a) => !STORAGE_URL.test(a)), stdin: false };
}

/** Variables that hold a secret by their name. */
const SECRET_NAME = /KEY|TOKEN|SECRET|PASS|CREDENTIAL|AUTH|COOKIE|SESSION|PRIVATE/i;

/** Commands that print the whole environment, or a variable named for a secret. */
function dumpsEnvironment(c: Cmd): boolean {
  switch (c.name) {
    case 'env':
      return c.args.every((a) => a.startsWith('-'));
    case 'printenv':
      return c.args.length === 0 || c.args.some((a) => SECRET_NAME.test(a));
    case 'set':
      return c.args.length === 0;
    case 'export':
      return c.args.length === 0 || c.args.every((a) => a === '-p');
    case 'declare':
    case 'typeset':
      return c.args.length > 0 && c.args.every((a) => /^-[a-z]*[px][a-z]*$/.test(a));
    default:
      return false;
  }
}

type Leak = 'file' | 'environment' | null;

/** What a command's output carries: the environment, or files it names that lie outside the workspace. */
function outputOf(c: Cmd): Leak {
  if (dumpsEnvironment(c)) return 'environment';
  const inputs = flags(c).positionals.concat(
    c.redirects.filter((r) => r.op === '<' && r.target).map((r) => r.target!.text),
  );
  return inputs.some((f) => leaks(c, f)) ? 'file' : null;
}

function leaks(c: Cmd, raw: string): boolean {
  return pathsOf(c, raw).some((p) => outsideWorkspace(c, p) && !PUBLIC_FACTS.test(normalizePath(p, c.dir)));
}

/** Output to a socket: a /dev/tcp redirect, or to an fd the line opened on one (`exec 3<>/dev/tcp/...; cat f >&3`). */
const toNetwork = (c: Cmd) =>
  writeTargets(c).some((t) => /^\/dev\/(tcp|udp)\//.test(t)) ||
  (c.netFds.size > 0 &&
    c.redirects.some((r) => r.op === '>&' && r.target !== null && c.netFds.has(r.target.text)));

const judged = new WeakMap<Cmd, Leak>();
/** Every command that can send: clients by name; any other only by a /dev/tcp redirect or inline code. */
const SENDERS = new Set([
  ...STORAGE_CLIENTS,
  'curl',
  'wget',
  'socat',
  'openssl',
  ...STREAM_CLIENTS,
  ...HTTPIE,
  ...COPY_CLIENTS,
]);

/** What this command sends to the network that it should not, or null. */
export function exfiltrates(c: Cmd): Leak {
  // Most commands send nothing: answered without a lookup (the guard runs per call).
  if (c.inlineNet === null && c.redirects.length === 0 && !SENDERS.has(c.name)) return null;
  let leak = judged.get(c);
  if (leak === undefined) {
    leak = judge(c);
    judged.set(c, leak);
  }
  return leak;
}

/** The graver of two findings: the environment over a file. */
function worse(a: Leak, b: Leak): Leak {
  return a === 'environment' || b === null ? a : b;
}

function judge(c: Cmd): Leak {
  if (c.inlineNet) {
    if (c.inlineNet.environment) return 'environment';
    if (c.inlineNet.files.some((f) => leaks(c, f))) return 'file';
  }
  let leak: Leak = null;
  if (c.redirects.length > 0 && toNetwork(c)) leak = worse(leak, outputOf(c));
  const sent = sends(c);
  if (sent === null) return leak;
  if (sent.files.some((f) => leaks(c, f))) leak = worse(leak, 'file');
  // What the client's arguments are built from: `curl -d "$(env)"`, `wget "x/?d=$(cat /etc/passwd)"`.
  for (const sub of c.subCmds) leak = worse(leak, outputOf(sub));
  if (sent.stdin) {
    for (const r of c.redirects)
      if (r.op === '<' && r.target && leaks(c, r.target.text)) leak = worse(leak, 'file');
    for (let i = 0; i < c.stage; i++) leak = worse(leak, outputOf(c.pipeline[i]!));
  }
  return leak;
}

export const EXFIL_RULES: ShellRule[] = [
  {
    id: 'shell.exfil.environment',
    severity: 'destructive',
    commands: [...SENDERS],
    also: { redirects: true, inlineNet: true },
    reason:
      'Sends the environment (env, printenv, os.environ, process.env) to the network: it holds tokens and keys.',
    suggestion: 'Send only the values the service needs, named one by one.',
    match: (c) => exfiltrates(c) === 'environment',
  },
  {
    id: 'shell.exfil.upload',
    severity: 'destructive',
    commands: [...SENDERS],
    also: { redirects: true, inlineNet: true },
    reason:
      'Sends a local file from outside the workspace to the network (an upload, a POST body, a raw socket, scp or rsync to a remote).',
    suggestion:
      'Upload only files inside the workspace; copy what is needed into the workspace first, and ask if it belongs to the machine.',
    match: (c) => exfiltrates(c) === 'file',
  },
];
