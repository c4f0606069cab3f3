/** Runs the real daemon (`bin/organism.js run`) as a child process, as a user would. */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const ORGANISM_BIN = fileURLToPath(new URL('../../bin/organism.js', import.meta.url));

export interface DaemonProcess {
  url: string;
  child: ChildProcess;
  /** Everything the daemon wrote to stdout so far (JSON log lines). */
  stdout(): string;
  /** Sends `signal` and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export function startDaemonProcess(args: string[], env: NodeJS.ProcessEnv = {}): Promise<DaemonProcess> {
  const child = spawn(process.execPath, [ORGANISM_BIN, 'run', '--port', '0', ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (chunk) => {
    out += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`daemon did not start in time; stderr:\n${err}`));
    }, 20_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`daemon exited ${code} before listening; stderr:\n${err}`));
    });
    child.stderr!.on('data', (chunk) => {
      err += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(err);
      if (match) {
        clearTimeout(timer);
        resolve({
          url: match[1]!,
          child,
          stdout: () => out,
          stop: (signal = 'SIGTERM') => {
            if (child.exitCode === null) child.kill(signal);
            return exited;
          },
        });
      }
    });
  });
}

/** Runs `organism <args>` to completion and returns its exit code and output. */
export function runCli(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [ORGANISM_BIN, ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
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
 * user would; returns the answer's status and its result parsed from JSON.
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
