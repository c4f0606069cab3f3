/** Runs the real daemon (`bin/organism.js run`) as a child process, as a user would. */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const ORGANISM_BIN = fileURLToPath(new URL('../../bin/organism.js', import.meta.url));

export interface DaemonProcess {
  url: string;
  /**
   * The daemon's local API token (admin), read from the file its "listening on" record names, as
   * the CLI on the same machine finds it; undefined for a daemon that names none.
   */
  token: string | undefined;
  /** `{ authorization: 'Bearer <token>' }`, plus `extra`: headers for a fetch of the daemon's API. */
  headers(extra?: Record<string, string>): Record<string, string>;
  child: ChildProcess;
  /** Everything the daemon wrote to stdout so far (JSON log lines). */
  stdout(): string;
  /** Everything it wrote to stderr so far (nothing, on a clean run). */
  stderr(): string;
  /** Sends `signal` and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** The daemon's "listening on" log record; in JSON the URL ends at the closing quote. */
export const LISTENING = /listening on (http:\/\/[^\s"]+)/;
/** The same record's `token_file`: where the daemon keeps its local API token. */
const TOKEN_FILE = /"token_file":"([^"]+)"/;

/**
 * The local tokens of the daemons started here with no auth.tokens, by URL: `useTool` and the
 * service helpers' `call` act as the person on that daemon's machine, as the CLI does. A daemon
 * with tokens is not here: its tests say which token each call uses.
 */
const tokensByUrl = new Map<string, string>();
/** The "listening on" record (logged at every log_level) says whether organism.yaml has tokens. */
const LISTENING_OPEN = /"auth":false[^\n]*listening on/;

/** The local token of a daemon with no auth.tokens started by startDaemonProcess at `url`, or undefined. */
export function tokenFor(url: string): string | undefined {
  return tokensByUrl.get(url.replace(/\/+$/, ''));
}

/**
 * fetch() as the person on the machine of a daemon started here with no auth.tokens: with its local
 * token, unless `init` sends an Authorization of its own. Any other URL is fetched as it is.
 */
export function daemonFetch(url: string, init: RequestInit = {}): Promise<Response> {
  const token = tokenFor(new URL(url).origin);
  const headers = new Headers(init.headers);
  if (token && !headers.has('authorization')) headers.set('authorization', `Bearer ${token}`);
  return fetch(url, { ...init, headers });
}

/** The local API token of the daemon of `dataDir` (`<data_dir>/api-token`), as the CLI reads it. */
export async function localToken(dataDir: string): Promise<string> {
  return (await readFile(join(dataDir, 'api-token'), 'utf8')).trim();
}

/** `{ authorization: 'Bearer <token>' }` (nothing for no token), plus `extra`. */
export function bearer(
  token: string | undefined,
  extra: Record<string, string> = {},
): Record<string, string> {
  return token ? { authorization: `Bearer ${token}`, ...extra } : { ...extra };
}

/**
 * The checkout's own organism.yaml, copied into a temp folder with a data_dir there (its listeners
 * by absolute path): a test that runs the default organism never writes into the checkout's data
 * dir (after `npm test`, `organism audit --verify` in the checkout still passes), and two daemons
 * of it in one test never share a data dir (the second would be refused).
 */
export function defaultOrganismCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), 'organism-default-'));
  const text = readFileSync(join(REPO_ROOT, 'organism.yaml'), 'utf8')
    .replace(/^organism:\n/m, `organism:\n  data_dir: ${JSON.stringify(join(dir, 'data'))}\n`)
    .replaceAll(/^(\s+(?:handler|script): )\.\//gm, `$1${REPO_ROOT}`);
  const file = join(dir, 'organism.yaml');
  writeFileSync(file, text);
  return file;
}

/** `args` with the checkout's own organism.yaml (named, or the default) swapped for a temp copy. */
function awayFromCheckout(args: string[]): string[] {
  const at = args.findIndex((arg) => arg === '--config' || arg === '-c');
  const named = at === -1 ? 'organism.yaml' : args[at + 1];
  if (named === undefined || resolve(REPO_ROOT, named) !== join(REPO_ROOT, 'organism.yaml')) return args;
  const rest = at === -1 ? args : [...args.slice(0, at), ...args.slice(at + 2)];
  return [...rest, '--config', defaultOrganismCopy()];
}

/**
 * `launcher`: a program that starts the daemon as a supervisor would, with its own arguments
 * (`['setpriv', '--reuid=65534', ...]`); the daemon's command line follows them.
 */
export function startDaemonProcess(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  launcher: readonly string[] = [],
  /** `dev`: the daemon with its reload on save (`organism dev`), started and stopped alike. */
  subcommand: 'run' | 'dev' = 'run',
): Promise<DaemonProcess> {
  const command = [process.execPath, ORGANISM_BIN, subcommand, '--port', '0', ...awayFromCheckout(args)];
  const [program, ...rest] = [...launcher, ...command] as [string, ...string[]];
  const child = spawn(program, rest, {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`daemon did not start in time; output:\n${out}${err}`));
    }, 20_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`daemon exited ${code} before listening; output:\n${out}${err}`));
    });
    // The "listening on" line is a log record on stdout like the rest (JSON: the URL ends at a
    // quote); stderr is searched too, where a dist/ built before that change still writes it.
    // Once found, later output is only collected: a daemon still logging after its test removed
    // its data dir must not make this read a token file that is gone (an uncaught ENOENT).
    let found = false;
    const look = () => {
      if (found) return;
      const match = LISTENING.exec(out) ?? LISTENING.exec(err);
      if (match) {
        found = true;
        clearTimeout(timer);
        const tokenFile = TOKEN_FILE.exec(out)?.[1];
        const token = tokenFile ? readFileSync(tokenFile, 'utf8').trim() : undefined;
        if (token && LISTENING_OPEN.test(out)) tokensByUrl.set(match[1]!, token);
        resolve({
          url: match[1]!,
          token,
          headers: (extra = {}) => bearer(token, extra),
          child,
          stdout: () => out,
          stderr: () => err,
          stop: (signal = 'SIGTERM') => {
            if (child.exitCode === null) child.kill(signal);
            return exited;
          },
        });
      }
    };
    child.stdout!.on('data', (chunk) => {
      out += chunk;
      look();
    });
    child.stderr!.on('data', (chunk) => {
      err += chunk;
      look();
    });
  });
}

/**
 * Runs `organism <args>` to completion and returns its exit code and output. Given `--url` of a
 * daemon started here with no auth.tokens, and no ORGANISM_TOKEN in `env`, it runs as the user who
 * set ORGANISM_TOKEN to that daemon's local token (with --config instead, the CLI finds it itself).
 */
export function runCli(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const url = args[args.indexOf('--url') + 1];
  const token = args.includes('--url') && url !== undefined ? tokenFor(url) : undefined;
  const implied = token && !('ORGANISM_TOKEN' in env) ? { ORGANISM_TOKEN: token } : {};
  const child = spawn(process.execPath, [ORGANISM_BIN, ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...implied, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => {
    stdout += c;
  });
  child.stderr.on('data', (c) => {
    stderr += c;
  });
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

const unescapeXml = (text: string) =>
  text
    .replaceAll('&quot;', '"')
    .replaceAll('&apos;', "'")
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&');

/**
 * Calls `tool` through a listener running listeners/toolbox.ts, with `organism send --wait`, as a
 * user would (runCli: with the local token of a daemon started here with no auth.tokens); returns
 * the answer's status and its result parsed from JSON.
 */
export async function useTool(
  url: string,
  tool: string,
  args: unknown,
  listener = 'toolbox',
): Promise<{ status: string; result: any }> {
  const json = JSON.stringify(args).replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
  const payload = `<use-tool><tool>${tool}</tool><args>${json}</args></use-tool>`;
  const { code, stdout, stderr } = await runCli(['send', '--url', url, '--to', listener, payload, '--wait']);
  const answer = stdout.split('\n').find((line) => line.startsWith(`${listener} -> api`));
  const status = /<status>([^<]*)<\/status>/.exec(answer ?? '')?.[1];
  const result = /<result>([^<]*)<\/result>/.exec(answer ?? '')?.[1];
  if (code !== 0 || status === undefined || result === undefined)
    throw new Error(`no tool answer (exit ${code}):\n${stdout}${stderr}`);
  return { status, result: JSON.parse(unescapeXml(result)) };
}
