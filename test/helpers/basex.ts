/**
 * A real BaseX server for a test file: Debian's `basexserver` on a free loopback port, its home
 * (databases, .basex) in a temp folder, the admin password set to a random one with -c. Missing
 * basex fails the test with what to install: these tests never skip.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BasexClient } from '../../librarian/basex/client.ts';
import { freePort } from './ports.ts';

export interface BasexServer {
  host: string;
  port: number;
  user: string;
  password: string;
  /** The folder holding the server's databases. */
  home: string;
  stop(): Promise<void>;
}

export const BASEXSERVER = '/usr/bin/basexserver';

export function requireBasex(): void {
  const found = spawnSync('sh', ['-c', `command -v ${BASEXSERVER}`]).status === 0;
  if (!found) {
    throw new Error(
      `${BASEXSERVER} not found: these tests need a real BaseX server (Debian's basex package: apt-get install basex)`,
    );
  }
}

export async function startBasex(timeoutMs = 30_000): Promise<BasexServer> {
  requireBasex();
  const home = await mkdtemp(join(tmpdir(), 'basex-'));
  const port = await freePort();
  const password = randomBytes(12).toString('hex');
  const child: ChildProcess = spawn(
    BASEXSERVER,
    [`-p${port}`, '-n127.0.0.1', '-z', '-c', `PASSWORD ${password}`],
    {
      cwd: home,
      // The home folder (org.basex.path) in the temp dir; a small, quick-starting JVM for a test.
      env: {
        ...process.env,
        JAVA_ARGS: `-Dorg.basex.path=${home}/ -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xmx256m`,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const started = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    const check = () => {
      if (output.includes('Server was started')) {
        clearTimeout(timer);
        resolve(true);
      }
    };
    child.stdout!.on('data', check);
    exited.then(() => {
      clearTimeout(timer);
      resolve(false);
    });
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
    await rm(home, { recursive: true, force: true });
  };
  // The -c commands run after the server is up: wait until the new password logs in.
  const deadline = Date.now() + timeoutMs;
  let ready = false;
  while (started && !ready && Date.now() < deadline) {
    const client = new BasexClient({ host: '127.0.0.1', port, user: 'admin', password: () => password });
    ready = await client.command('INFO').then(
      () => true,
      () => false,
    );
    await client.close();
    if (!ready) await new Promise((r) => setTimeout(r, 100));
  }
  if (!ready) {
    await stop();
    throw new Error(`basexserver did not start on 127.0.0.1:${port} within ${timeoutMs} ms:\n${output}`);
  }
  return { host: '127.0.0.1', port, user: 'admin', password, home, stop };
}
