/**
 * The daemon's weight as a user meets it: the default organism (the package's organism.yaml and
 * listeners/) in a project that depends on organism, started as `npx organism run` from the built
 * package (dist/, rebuilt first when stale).
 *
 * - daemon_idle_rss_mb: the daemon's node process's RSS 10 s after its first 200 from /healthz,
 *   idle, started as `npx organism run`.
 * - daemon_start_ms: from spawning `node node_modules/.bin/organism run` to the first 200 from
 *   /healthz, the listeners compiled by an earlier start (as on every restart);
 *   daemon_start_ms_compiling_listeners beside it is the first start after an edit. Started through npx, npm's own start-up (about a second here, the same for any bin)
 *   is added; that figure is reported beside it (via_npx_*).
 *
 * Floor, in the same run and measured the same way: a bare `node` HTTP server answering /healthz,
 * a bin in the same project's node_modules/.bin. Each is started ROUNDS times, alternating, and
 * the median reported.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../test/helpers/ports.ts';
import { percentile, round } from './support.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ROUNDS = Number(process.env.BENCH_DAEMON_ROUNDS ?? 3);
const IDLE_MS = 10_000;
const TARGET_RSS_MB = 70;
const TARGET_START_MS = 600;

const FLOOR_SERVER = `#!/usr/bin/env node
import { createServer } from 'node:http';
const port = Number(process.argv[2]);
createServer((req, res) => {
  res.writeHead(req.url === '/healthz' ? 200 : 404, { 'content-type': 'application/json' });
  res.end('{"ok":true}');
}).listen(port, '127.0.0.1');
process.on('SIGTERM', () => process.exit(0));
`;

/** A project depending on organism, laid out as npm does, with the default organism in it. */
function project(): string {
  const dir = mkdtempSync(join(tmpdir(), 'organism-bench-daemon-'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'bench', private: true, type: 'module' }));
  cpSync(join(ROOT, 'organism.yaml'), join(dir, 'organism.yaml'));
  cpSync(join(ROOT, 'listeners'), join(dir, 'listeners'), { recursive: true });
  const bin = join(dir, 'node_modules', '.bin');
  mkdirSync(bin, { recursive: true });
  symlinkSync(ROOT.replace(/\/$/, ''), join(dir, 'node_modules', 'organism'));
  symlinkSync('../organism/bin/organism.js', join(bin, 'organism'));
  writeFileSync(join(dir, 'floor-server.js'), FLOOR_SERVER, { mode: 0o755 });
  symlinkSync('../../floor-server.js', join(bin, 'floor-server'));
  return dir;
}

function healthy(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = get({ host: '127.0.0.1', port, path: '/healthz', timeout: 1_000, agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.once('error', () => resolve(false));
    req.once('timeout', () => {
      req.destroy();
      resolve(false);
    });
  });
}

/** The processes under `pid` (npx runs the bin's node as its child or grandchild). */
function descendants(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) children.push(Number(entry), ...descendants(Number(entry)));
    } catch {
      // gone meanwhile
    }
  }
  return children;
}

function rssMbOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN) / 1024;
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  // Through npx the server is a grandchild, and npx does not pass SIGTERM on to the floor server:
  // it lived on, holding this process's stderr pipe, so the bench never exited.
  const below = child.pid === undefined ? [] : descendants(child.pid);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  for (const pid of below) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // gone meanwhile
    }
  }
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
  // npx exits at once; the daemon below it is still shutting down (the workspace's volume is
  // unmounted last), and its data dir cannot be removed before it is gone.
  for (const deadline = Date.now() + 15_000; below.some(alive) && Date.now() < deadline; ) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  for (const pid of below.filter(alive)) process.kill(pid, 'SIGKILL');
}

function alive(pid: number): boolean {
  return existsSync(`/proc/${pid}`);
}

function isNode(pid: number): boolean {
  try {
    return readlinkSync(`/proc/${pid}/exe`) === process.execPath;
  } catch {
    return false;
  }
}

/**
 * Starts the project's `bin` with `args` in dir, through `npx --no` or as `node node_modules/.bin/<bin>`:
 * the time to the first 200, then, when `idle`, the RSS of `bin`'s node process after IDLE_MS.
 */
async function measure(dir: string, bin: string, args: string[], how: 'npx' | 'node', idle: boolean) {
  const port = await freePort();
  const argv = [...args.map((a) => a.replace('<port>', String(port)))];
  const started = performance.now();
  const child =
    how === 'npx'
      ? spawn('npx', ['--no', bin, ...argv], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] })
      : spawn(process.execPath, [join('node_modules', '.bin', bin), ...argv], {
          cwd: dir,
          stdio: ['ignore', 'ignore', 'pipe'],
        });
  let stderr = '';
  child.stderr!.on('data', (chunk) => {
    stderr += chunk;
  });
  try {
    while (!(await healthy(port))) {
      if (child.exitCode !== null) throw new Error(`${bin} exited ${child.exitCode}: ${stderr.slice(-2000)}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const startMs = performance.now() - started;
    if (!idle) return { startMs, rssMb: Number.NaN };
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    // Through npx, npm's own node process names the bin too; the daemon is a process under it.
    const candidates = how === 'npx' ? descendants(child.pid!) : [child.pid!];
    const node = candidates.find((pid) => isNode(pid) && cmdline(pid).includes(bin));
    if (node === undefined) throw new Error(`no node process running ${bin} found (pid ${child.pid})`);
    return { startMs, rssMb: rssMbOf(node) };
  } finally {
    await stop(child);
  }
}

export async function* run(): AsyncIterable<Record<string, unknown>> {
  if (process.platform !== 'linux') {
    yield { bench: 'daemon', skipped: 'reads RSS from /proc: Linux only' };
    return;
  }
  const build = spawnSync(process.execPath, [join(ROOT, 'bin/build.js'), '--if-stale'], { stdio: 'inherit' });
  // tsc emits despite a type error elsewhere; the typecheck reports those. Only no dist/ stops this.
  if (build.status !== 0 && !existsSync(join(ROOT, 'dist/src/cli/main.js'))) {
    throw new Error('bench daemon: `node bin/build.js` failed and left no dist/');
  }
  const dir = project();
  try {
    const daemon = { start: [] as number[], npxStart: [] as number[], rss: [] as number[] };
    const floor = { start: [] as number[], npxStart: [] as number[], rss: [] as number[] };
    const coldStart: number[] = [];
    const runs = [
      { into: floor, bin: 'floor-server', args: ['<port>'] },
      { into: daemon, bin: 'organism', args: ['run', '--port', '<port>'] },
    ];
    for (let i = 0; i < ROUNDS; i++) {
      for (const { into, bin, args } of runs) {
        const viaNpx = await measure(dir, bin, args, 'npx', true);
        into.npxStart.push(viaNpx.startMs);
        into.rss.push(viaNpx.rssMb);
        rmSync(join(dir, '.organism'), { recursive: true, force: true }); // a fresh data dir each start
        into.start.push((await measure(dir, bin, args, 'node', false)).startMs);
        rmSync(join(dir, '.organism'), { recursive: true, force: true });
      }
      // The first start after the listeners were edited: nothing compiled in the cache.
      rmSync(join(dir, 'node_modules', '.cache'), { recursive: true, force: true });
      coldStart.push((await measure(dir, 'organism', ['run', '--port', '<port>'], 'node', false)).startMs);
      rmSync(join(dir, '.organism'), { recursive: true, force: true });
    }
    const median = (values: number[]) =>
      round(
        percentile(
          [...values].sort((a, b) => a - b),
          50,
        ),
      );
    const common = {
      started_as: 'npx organism run (the default organism.yaml and listeners/, built package)',
      floor_is: 'a bare node http server answering /healthz, started through npx the same way',
      rounds: ROUNDS,
      node: process.version,
    };
    yield {
      bench: 'daemon_idle_rss_mb',
      daemon_idle_rss_mb: median(daemon.rss),
      floor_idle_rss_mb: median(floor.rss),
      samples: daemon.rss.map((v) => round(v)),
      target_mb: TARGET_RSS_MB,
      measured_after_ms: IDLE_MS,
      ...common,
    };
    const { started_as: _, ...rest } = common;
    yield {
      bench: 'daemon_start_ms',
      daemon_start_ms: median(daemon.start),
      floor_start_ms: median(floor.start),
      samples: daemon.start.map((v) => round(v)),
      target_ms: TARGET_START_MS,
      started_as: 'node node_modules/.bin/organism run; floor: node node_modules/.bin/floor-server',
      // daemon_start_ms is a start with the listeners compiled before (node_modules/.cache/organism),
      // as every restart after the first; this one compiles them (esbuild) first.
      daemon_start_ms_compiling_listeners: median(coldStart),
      via_npx_daemon_start_ms: median(daemon.npxStart),
      via_npx_floor_start_ms: median(floor.npxStart),
      ...rest,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
