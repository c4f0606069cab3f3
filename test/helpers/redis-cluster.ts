/**
 * A local Redis Cluster for the tests and the bench: 6 redis-server processes in cluster mode on
 * free loopback ports in a temp dir, 3 masters and 3 replicas (`redis-cli --cluster create
 * --cluster-replicas 1`), slots split evenly in three ranges (0-5460, 5461-10922, 10923-16383).
 * Start one per test file (beforeAll) and stop it in afterAll: creating one takes about 2 s.
 */
import { type ChildProcess, execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { freePort } from './ports.ts';
import { spawnRedisServer } from './redis-server.ts';

const run = promisify(execFile);

export interface ClusterNode {
  port: number;
  /** Whether this node is a master now (after a failover a replica becomes one). */
  role(): Promise<'master' | 'slave'>;
  /** kill -9 of the process. */
  kill(): void;
  readonly pid: number;
  /** Whether the process still runs. */
  readonly alive: boolean;
}

export interface LocalRedisCluster {
  /** Every node, in start order; nodes[0..2] are the masters as created. */
  nodes: ClusterNode[];
  /** `redis+cluster://127.0.0.1:p1,127.0.0.1:p2,...` (every node: any of them is a seed). */
  url: string;
  /** A plain client to one node (the caller disconnects it). */
  nodeClient(port: number): Redis;
  /** The nodes that are masters now, with the slot ranges each serves. */
  masters(): Promise<Array<{ port: number; slots: Array<[number, number]> }>>;
  /** Resolves when every node reports cluster_state:ok and agrees on `masterCount` masters. */
  waitOk(ms?: number): Promise<void>;
  /** FLUSHALL on every master (between tests). */
  flush(): Promise<void>;
  stop(): Promise<void>;
}

function plain(port: number): Redis {
  const c = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1, lazyConnect: false });
  c.on('error', () => {});
  return c;
}

async function info(port: number, section: string): Promise<Map<string, string>> {
  const c = plain(port);
  try {
    const text = String(
      section === 'cluster' ? await c.call('CLUSTER', 'INFO') : await c.call('INFO', section),
    );
    const map = new Map<string, string>();
    for (const line of text.split('\r\n')) {
      const at = line.indexOf(':');
      if (at > 0) map.set(line.slice(0, at), line.slice(at + 1));
    }
    return map;
  } finally {
    c.disconnect();
  }
}

async function poll(what: string, ms: number, probe: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      if (await probe()) return;
    } catch (error) {
      last = error;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`local redis cluster: ${what} not within ${ms} ms${last ? ` (${String(last)})` : ''}`);
}

/**
 * Starts the cluster. `nodeTimeoutMs` (cluster-node-timeout) sets how soon a replica takes over a
 * dead master: about twice it, so 1 s makes a failover test quick.
 */
export async function startRedisCluster(
  options: { nodeTimeoutMs?: number } = {},
): Promise<LocalRedisCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'organism-cluster-'));
  const ports: number[] = [];
  while (ports.length < 6) {
    const p = await freePort();
    // The cluster bus listens on port + 10000: both must be free and below 65536.
    if (p + 10_000 < 65_536 && !ports.includes(p)) ports.push(p);
  }
  const children: ChildProcess[] = [];
  const nodes: ClusterNode[] = [];
  for (const port of ports) {
    const nodeDir = join(dir, String(port));
    await mkdir(nodeDir);
    const child = spawnRedisServer(port, nodeDir, [
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      'nodes.conf',
      '--cluster-node-timeout',
      String(options.nodeTimeoutMs ?? 1_000),
      // A replica takes over however long ago it last heard its master (the default 10 would
      // refuse when the master died right after the replica's first sync).
      '--cluster-replica-validity-factor',
      '0',
    ]);
    children.push(child);
    nodes.push({
      port,
      get pid() {
        return child.pid ?? 0;
      },
      get alive() {
        return child.exitCode === null && child.signalCode === null;
      },
      kill: () => child.kill('SIGKILL'),
      role: async () => ((await info(port, 'replication')).get('role') as 'master' | 'slave') ?? 'slave',
    });
  }
  const stop = (): Promise<void> => stopServers(children, dir);
  try {
    for (const port of ports) {
      await poll(`node ${port} to answer`, 10_000, async () => (await info(port, 'server')).size > 0);
    }
    await run('redis-cli', [
      '--cluster',
      'create',
      ...ports.map((p) => `127.0.0.1:${p}`),
      '--cluster-replicas',
      '1',
      '--cluster-yes',
    ]);
    const cluster: LocalRedisCluster = {
      nodes,
      url: `redis+cluster://${ports.map((p) => `127.0.0.1:${p}`).join(',')}`,
      nodeClient: plain,
      async masters() {
        const live = nodes.find((n) => n.alive)!;
        const c = plain(live.port);
        try {
          const slots = (await c.call('CLUSTER', 'SLOTS')) as Array<[number, number, [string, number]]>;
          const byPort = new Map<number, Array<[number, number]>>();
          for (const [from, to, master] of slots) {
            const list = byPort.get(master[1]) ?? [];
            list.push([from, to]);
            byPort.set(master[1], list);
          }
          return [...byPort].map(([port, s]) => ({ port, slots: s })).sort((a, b) => a.port - b.port);
        } finally {
          c.disconnect();
        }
      },
      async waitOk(ms = 20_000) {
        await poll('cluster_state:ok on every live node', ms, async () => {
          for (const node of nodes) {
            if (!node.alive) continue;
            const state = await info(node.port, 'cluster');
            if (state.get('cluster_state') !== 'ok') return false;
          }
          // Every live replica is in sync with its master (else it cannot take over).
          for (const node of nodes) {
            if (!node.alive) continue;
            const repl = await info(node.port, 'replication');
            if (repl.get('role') === 'slave' && repl.get('master_link_status') !== 'up') {
              // A replica of the dead master stays down until it is promoted or re-pointed.
              const master = Number(repl.get('master_port'));
              if (nodes.find((n) => n.port === master)?.alive) return false;
            }
          }
          // Every slot is served by a live master.
          const masters = await cluster.masters();
          const live = new Set(nodes.filter((n) => n.alive).map((n) => n.port));
          let covered = 0;
          for (const m of masters) {
            if (!live.has(m.port)) return false;
            for (const [a, b] of m.slots) covered += b - a + 1;
          }
          return covered === 16_384;
        });
      },
      async flush() {
        for (const m of await cluster.masters()) {
          const c = plain(m.port);
          try {
            await c.flushall();
          } finally {
            c.disconnect();
          }
        }
      },
      stop,
    };
    await cluster.waitOk();
    return cluster;
  } catch (error) {
    await stop();
    throw error;
  }
}

/** used_cpu_sys + used_cpu_user of one server, in microseconds (INFO cpu). */
export async function redisCpuMicros(port: number): Promise<number> {
  const cpu = await info(port, 'cpu');
  return Math.round((Number(cpu.get('used_cpu_sys')) + Number(cpu.get('used_cpu_user'))) * 1e6);
}

/** Kills the servers that are still running (SIGKILL), waits for them, and removes their folder. */
export async function stopServers(children: readonly ChildProcess[], dir: string): Promise<void> {
  await Promise.all(
    children.map((child) => {
      if (child.exitCode !== null || child.signalCode !== null) return undefined;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      return exited;
    }),
  );
  await rm(dir, { recursive: true, force: true });
}
