/**
 * The page's daemon: the installed package's `organism run` in the project, as its user starts it
 * (its own bin, not npx, so a signal reaches it), on a free loopback port (`--port 0`). The CLI in
 * the project finds it by itself, as a user's does: through the data dir (`<data_dir>/daemon.json`
 * names the live daemon's address, `<data_dir>/api-token` its local token).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { killGroup, userEnv } from './project.ts';

/** The "listening on" log record; in JSON the URL ends at the closing quote. */
const LISTENING = /listening on (http:\/\/[^\s"]+)/;
/** What is kept of the daemon's output for a failure's message. */
const KEEP = 64 * 1024;

export class PageDaemon {
  private output = '';
  private exited: Promise<void>;
  exitCode: number | null | undefined;

  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
  ) {
    this.exited = new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
    });
  }

  /** Starts it in `project`; rejects with its output when it exits or does not listen in `timeoutMs`. */
  static start(project: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<PageDaemon> {
    const bin = join(project, 'node_modules/organism/bin/organism.js');
    const child = spawn(process.execPath, [bin, 'run', '--port', '0'], {
      cwd: project,
      env: { ...userEnv(), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        killGroup(child);
        reject(new Error(`organism run did not listen within ${timeoutMs} ms; its output:\n${tail(output)}`));
      }, timeoutMs);
      const onExit = (code: number | null, signal: string | null) => {
        clearTimeout(timer);
        reject(
          new Error(`organism run exited ${code ?? signal} before listening; its output:\n${tail(output)}`),
        );
      };
      child.once('exit', onExit);
      const seen = (chunk: Buffer) => {
        output = keep(output + chunk);
        const match = LISTENING.exec(output);
        if (!match) return;
        clearTimeout(timer);
        child.off('exit', onExit);
        child.stdout!.off('data', seen);
        child.stderr!.off('data', seen);
        const daemon = new PageDaemon(child, match[1]!);
        daemon.output = output;
        child.once('exit', (code, signal) => {
          daemon.exitCode = code ?? (signal ? -1 : null);
        });
        const more = (c: Buffer) => {
          daemon.output = keep(daemon.output + c);
        };
        child.stdout!.on('data', more);
        child.stderr!.on('data', more);
        resolve(daemon);
      };
      child.stdout!.on('data', seen);
      child.stderr!.on('data', seen);
    });
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The last lines of what it logged, for a failure's message. */
  log(lines = 30): string {
    return tail(this.output, lines);
  }

  /** SIGTERM (it drains and exits 0), SIGKILL to its group if it has not exited in `graceMs`. */
  async stop(graceMs = 15_000): Promise<void> {
    if (!this.running) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => killGroup(this.child), graceMs);
    await this.exited;
    clearTimeout(timer);
    // Whatever it started in its group and left behind (a tool's program, an MCP server) goes too.
    killGroup(this.child);
  }
}

function keep(text: string): string {
  return text.length > KEEP ? text.slice(-KEEP) : text;
}

export function tail(text: string, lines = 30): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}
