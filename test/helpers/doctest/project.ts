/**
 * The project the docs are run in, as a new user makes it: the packed package installed into a
 * fresh folder, `organism init`, `npm install` (offline, from the npm cache bin/test-prepare.sh
 * fills). Made once per test file and reset to what init wrote before each page.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { watch } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, relative } from 'node:path';
import { inject } from 'vitest';
import { REPO_ROOT } from './parse.ts';

const NPM_INSTALL_FLAGS = ['--offline', '--no-audit', '--no-fund'];

/**
 * The environment of a user's shell: without what `npm test` and vitest set for this run (npm_*
 * config, VITEST*, NODE_ENV, the checkout's node_modules/.bin on PATH) and without a daemon address
 * or token of the developer's own (ORGANISM_URL, ORGANISM_TOKEN), which would otherwise steer
 * the npm, vitest and organism started inside it.
 */
export function userEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(npm_|VITEST|NODE_ENV$|NODE_OPTIONS$|TEST$|INIT_CWD$|ORGANISM_URL$|ORGANISM_TOKEN$)/i.test(key))
      continue;
    env[key] = value;
  }
  env.PATH = (env.PATH ?? '')
    .split(delimiter)
    .filter((p) => !/node_modules[\\/]\.bin$/.test(p))
    .join(delimiter);
  return env;
}

export interface Ran {
  code: number | null;
  /** The signal that ended it, or 'timeout' when it ran past its time and was killed. */
  signal: string | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `command args` in `cwd` with the user's environment (plus `env`), in a process group of its
 * own, killed whole when `timeoutMs` passes (npx and npm start children of their own) and when
 * the command exits.
 */
export function sh(
  command: string,
  args: string[],
  cwd: string,
  options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<Ran> {
  const child = spawn(command, args, {
    cwd,
    env: { ...userEnv(), ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => {
    stdout += c;
  });
  child.stderr.on('data', (c) => {
    stderr += c;
  });
  let timedOut = false;
  const timer =
    options.timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          killGroup(child);
        }, options.timeoutMs);
  // What the command left running in the background (`cmd &`) goes when it ends: it would hold
  // its output open (no 'close' until it exits) and outlive the page.
  child.once('exit', () => killGroup(child));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal: timedOut ? 'timeout' : signal, stdout, stderr });
    });
  });
}

/** Signals `child`'s process group (spawned `detached`), which may outlive `child` itself. */
export function killGroup(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // No such group left.
  }
}

/** Runs a command and fails with its output when it does not exit 0. */
export async function ok(command: string, args: string[], cwd: string): Promise<Ran> {
  const ran = await sh(command, args, cwd);
  if (ran.code !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} (in ${cwd}) exited ${ran.code}:\n${ran.stdout}\n${ran.stderr}`,
    );
  }
  return ran;
}

export interface Packed {
  tarball: string;
  /** The paths `npm pack` put in it. */
  files: string[];
}

/**
 * This run's packed package: packed once per run in the folder test/pack-setup.ts provides, by
 * whichever test file asks first; the others wait for it (a watch on the folder, not a poll).
 */
export async function packedPackage(): Promise<Packed> {
  const dir = inject('organismPackDir') ?? (await mkdtemp(join(tmpdir(), 'organism-pack-')));
  const result = join(dir, 'pack.json');
  const failed = join(dir, 'pack.error');
  try {
    await mkdir(join(dir, 'lock'));
  } catch {
    return awaitPack(dir, result, failed);
  }
  try {
    // Only when stale: the suite's global setup built dist/ already, and a rebuild swaps dist/
    // under the daemons other test files are starting from it.
    await ok('npm', ['run', 'build', '--', '--if-stale'], REPO_ROOT);
    // Scripts off: the build ran just above, and prepare would only run it again.
    const ran = await ok('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], REPO_ROOT);
    const [info] = JSON.parse(ran.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
    const packed: Packed = { tarball: join(dir, info!.filename), files: info!.files.map((f) => f.path) };
    await writeFile(`${result}.tmp`, JSON.stringify(packed));
    await rename(`${result}.tmp`, result);
    return packed;
  } catch (error) {
    await writeFile(failed, String((error as Error).message));
    throw error;
  }
}

async function awaitPack(dir: string, result: string, failed: string): Promise<Packed> {
  const ready = async (): Promise<Packed | undefined> => {
    const text = await readFile(result, 'utf8').catch(() => undefined);
    if (text !== undefined) return JSON.parse(text) as Packed;
    const error = await readFile(failed, 'utf8').catch(() => undefined);
    if (error !== undefined) throw new Error(`npm pack failed in another test file:\n${error}`);
    return undefined;
  };
  return new Promise<Packed>((resolve, reject) => {
    const watcher = watch(dir, () => {
      ready().then((p) => {
        if (!p) return;
        watcher.close();
        resolve(p);
      }, reject);
    });
    // Once watching, in case it was written before the watch began.
    ready().then((p) => {
      if (!p) return;
      watcher.close();
      resolve(p);
    }, reject);
  });
}

/**
 * An `organism init` project with the packed package installed. `reset()` puts back every file
 * init wrote and removes the rest (node_modules stays: one install per run).
 */
export class DocProject {
  private constructor(
    readonly work: string,
    readonly dir: string,
    private readonly initial: Map<string, Buffer>,
  ) {}

  static async create(packed: Packed): Promise<DocProject> {
    const work = await mkdtemp(join(tmpdir(), 'organism-doctest-'));
    const dir = join(work, 'my-organism');
    await mkdir(dir);
    // What a user does: a fresh project (npm's own `"type": "commonjs"` package.json included).
    await ok('npm', ['init', '-y'], dir);
    await ok('npm', ['install', packed.tarball, ...NPM_INSTALL_FLAGS], dir);
    await ok('npx', ['--no-install', 'organism', 'init'], dir);
    await ok('npm', ['install', ...NPM_INSTALL_FLAGS], dir);
    const initial = new Map<string, Buffer>();
    for (const file of await projectFiles(dir)) initial.set(file, await readFile(join(dir, file)));
    return new DocProject(work, dir, initial);
  }

  /**
   * What every program of the current page runs with besides the user's environment: a config
   * home of the page's own (XDG_CONFIG_HOME: the audit key and its checkpoints), as on a machine
   * where this project's organism never ran. With a shared one, the next page's daemon would find
   * the last page's checkpoint of a data dir that reset() emptied, and rightly refuse tool calls
   * until an operator checks the audit log.
   */
  env: NodeJS.ProcessEnv = {};

  /** The project as init wrote it: its files back, anything else (the data dir included) gone. */
  async reset(): Promise<void> {
    const home = await mkdtemp(join(this.work, 'config-'));
    this.env = { XDG_CONFIG_HOME: home };
    for (const entry of await readdir(this.dir)) {
      if (entry !== 'node_modules') await rm(join(this.dir, entry), { recursive: true, force: true });
    }
    for (const [file, content] of this.initial) {
      await mkdir(dirname(join(this.dir, file)), { recursive: true });
      await writeFile(join(this.dir, file), content);
    }
  }

  async remove(): Promise<void> {
    await rm(this.work, { recursive: true, force: true });
  }
}

/** The project's files outside node_modules, relative to it. */
async function projectFiles(dir: string, root = dir): Promise<string[]> {
  const files: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory() && !(dir === root && entry.name === 'node_modules'))
      files.push(...(await projectFiles(path, root)));
    else if (entry.isFile()) files.push(relative(root, path));
  }
  return files;
}
