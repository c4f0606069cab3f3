/**
 * What the scale-out tests share: an organism.yaml on the Redis transport, several real daemon
 * processes started from it (each with its own data dir, as on separate machines), a real SMTP
 * server, a private redis-server for the restart test, and small HTTP helpers.
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis, Cluster as RedisCluster } from 'ioredis';
import { SMTPServer } from 'smtp-server';
import { createRedisClient } from '../../../src/redis-client.ts';
import { isClusterUrl } from '../../../src/redis-url.ts';
import { type NotYet, until as waitFor } from '../../../src/testing/index.ts';
import { type DaemonProcess, daemonFetch, startDaemonProcess } from '../../helpers/daemon.ts';
import { freePort } from '../../helpers/ports.ts';
import { spawnRedisServer } from '../../helpers/redis-server.ts';

const HERE = fileURLToPath(new URL('./', import.meta.url));
export const SHARED_REDIS = 'redis://127.0.0.1:6379';

export interface OrganismOptions {
  redisUrl: string;
  group: string;
  smtpPort?: number;
  maxDeliveries?: number;
  handlerTimeoutMs?: number;
  /** bus.partitions (left out when unset: the default, one). */
  partitions?: number;
  /** send_email's tool_config timeout_ms (left out when unset: the default). */
  sendEmailTimeoutMs?: number;
}

export function organismYaml(o: OrganismOptions): string {
  const smtp = o.smtpPort
    ? `smtp:\n  host: 127.0.0.1\n  port: ${o.smtpPort}\n  from: organism@example.com\n`
    : '';
  return `organism:
  name: scale-out-test
  data_dir: \${ORGANISM_TEST_DATA}
  log_level: info
server:
  host: 127.0.0.1
  port: 0
limits:
  handler_timeout_ms: ${o.handlerTimeoutMs ?? 3000}
bus:
  transport: redis
  url: ${o.redisUrl}
  group: ${o.group}
  max_deliveries: ${o.maxDeliveries ?? 5}
${o.partitions ? `  partitions: ${o.partitions}\n` : ''}history:
  max_bytes: 0
${smtp}listeners:
  - name: dispatch
    handler: ${HERE}dispatch.ts
    peers: [worker, mailer, crasher]
  - name: worker
    handler: ${HERE}worker.ts
  - name: mailer
    handler: ${HERE}mailer.ts
    max_concurrent: 1
    tools: [send_email]
    tool_config:
      send_email:
        allowed_recipients: ["*@example.com"]
${o.sendEmailTimeoutMs ? `        timeout_ms: ${o.sendEmailTimeoutMs}\n` : ''}  - name: crasher
    handler: ${HERE}crasher.ts
`;
}

/**
 * An organism of one long-running listener, `sleeper` (sleeper.ts: it notes each job's start in
 * SLEEPER_LOG), on the Redis transport; `more` is appended (further listeners, an llm section).
 */
export function sleeperYaml(o: {
  redisUrl: string;
  group: string;
  drainTimeoutMs?: number;
  more?: string;
  partitions?: number;
}): string {
  const drain = o.drainTimeoutMs === undefined ? '' : `  drain_timeout_ms: ${o.drainTimeoutMs}\n`;
  return `organism:
  name: sleeper-test
  data_dir: \${ORGANISM_TEST_DATA}
  log_level: info
server:
  host: 127.0.0.1
  port: 0
bus:
  transport: redis
  url: ${o.redisUrl}
  group: ${o.group}
${o.partitions ? `  partitions: ${o.partitions}\n` : ''}${drain}history:
  max_bytes: 0
listeners:
  - name: sleeper
    handler: ${HERE}sleeper.ts
    timeout_ms: 120000
${o.more ?? ''}`;
}

/** One line of SLEEPER_LOG: job n started in process pid at epoch ms `at`. */
export interface JobStart {
  n: number;
  pid: number;
  at: number;
}

/** Every job start noted in `file` so far, in order. */
export async function jobStarts(file: string): Promise<JobStart[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as JobStart);
}

export interface Cluster {
  dir: string;
  file: string;
  daemons: DaemonProcess[];
  /** Starts one more daemon (as on another machine: its own data dir). */
  start(env?: NodeJS.ProcessEnv): Promise<DaemonProcess>;
  stopAll(): Promise<void>;
}

export async function cluster(yaml: string, count: number, env: NodeJS.ProcessEnv = {}): Promise<Cluster> {
  const dir = await mkdtemp(join(tmpdir(), 'organism-scale-'));
  const file = join(dir, 'organism.yaml');
  await writeFile(file, yaml);
  let n = 0;
  const daemons: DaemonProcess[] = [];
  const start = async (extra: NodeJS.ProcessEnv = {}) => {
    const d = await startDaemonProcess(['--config', file], {
      ORGANISM_TEST_DATA: join(dir, `daemon-${++n}`),
      ...env,
      ...extra,
    });
    daemons.push(d);
    return d;
  };
  await Promise.all(Array.from({ length: count }, () => start()));
  return {
    dir,
    file,
    daemons,
    start,
    async stopAll() {
      await Promise.all(daemons.map((d) => d.stop('SIGKILL')));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export async function inject(base: string, payload: string, to = 'dispatch'): Promise<string> {
  const res = await daemonFetch(`${base}/api/v1/inject`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ to, payload }),
  });
  const body = (await res.json()) as { thread?: string };
  if (res.status !== 202 || !body.thread)
    throw new Error(`inject answered ${res.status}: ${JSON.stringify(body)}`);
  return body.thread;
}

export interface ThreadView {
  thread: string;
  status: string;
  messages: Array<{ id: string; from: string; to: string; kind: string; payload: string }>;
}

export async function view(base: string, thread: string): Promise<ThreadView | undefined> {
  const res = await daemonFetch(`${base}/api/v1/threads/${thread}`);
  if (res.status !== 200) return undefined;
  return (await res.json()) as ThreadView;
}

/** The `<done>` answer of a thread, if it has one. */
export function doneOf(v: ThreadView | undefined): string | undefined {
  return v?.messages.find((m) => m.payload.startsWith('<done>'))?.payload;
}

export function pidOf(done: string): number {
  return Number(/<pid>(\d+)<\/pid>/.exec(done)?.[1]);
}

/**
 * The kit's until() (src/testing) with the defaults of a test against a cluster of daemons: 30 s,
 * probes 100 ms apart, and a probe that throws (a daemon restarting refuses connections) is "not yet".
 */
export function until<T>(probe: () => Promise<T | NotYet>, what: string, ms = 30_000): Promise<T> {
  return waitFor(probe, { what, timeoutMs: ms, intervalMs: 100, errors: 'retry' });
}

/**
 * Resolves when every thread has its `<done>` on `base`; returns them by thread. On timeout the
 * error says how many finished and where each other thread stands (its last message).
 */
export async function allDone(
  base: string,
  threads: readonly string[],
  ms = 60_000,
): Promise<Map<string, string>> {
  const done = new Map<string, string>();
  const last = new Map<string, string>();
  try {
    return await until(
      async () => {
        for (const t of threads) {
          if (done.has(t)) continue;
          const v = await view(base, t);
          const d = doneOf(v);
          if (d) done.set(t, d);
          const m = v?.messages.at(-1);
          if (m) last.set(t, `${m.from}->${m.to} ${m.kind}: ${m.payload.slice(0, 160)}`);
        }
        return done.size === threads.length ? done : undefined;
      },
      `all ${threads.length} threads to finish`,
      ms,
    );
  } catch (error) {
    const open = threads.filter((t) => !done.has(t)).map((t) => `${t} (last: ${last.get(t) ?? 'none'})`);
    throw new Error(
      `${done.size} of ${threads.length} threads finished within ${ms} ms; not: ${open.join('; ')}`,
      { cause: error },
    );
  }
}

export function uniqueGroup(): string {
  return `scale-${randomUUID().slice(0, 8)}`;
}

/**
 * Every key matching `pattern` on one Redis or on every master of a cluster (where KEYS asks one
 * node only). A cluster client knows its masters once it has read the slot map ('ready'); asked
 * before, it lists none, and this answered no keys at all.
 */
export async function redisKeys(url: string, pattern: string): Promise<string[]> {
  const client = createRedisClient(url, { maxRetriesPerRequest: 1 });
  try {
    const either = client as Redis | RedisCluster;
    if (either instanceof RedisCluster && either.status !== 'ready') {
      await once(either, 'ready', { signal: AbortSignal.timeout(10_000) });
    }
    const nodes = either instanceof RedisCluster ? either.nodes('master') : [client];
    const keys: string[] = [];
    for (const node of nodes) keys.push(...(await node.keys(pattern)));
    return keys;
  } finally {
    client.disconnect();
  }
}

/** GET of each key (one by one: on a cluster they may live on different masters). */
export async function redisGetAll(url: string, keys: readonly string[]): Promise<Array<string | null>> {
  const client = createRedisClient(url, { maxRetriesPerRequest: 1 });
  try {
    return await Promise.all(keys.map((k) => client.get(k)));
  } finally {
    client.disconnect();
  }
}

/** Deletes every key of a consumer group (its streams, threads, history, dead letters). */
export async function dropGroup(url: string, group: string): Promise<void> {
  if (isClusterUrl(url)) {
    // Partitions' tags are `<group>/p<n>...`: one pattern finds them and the group's own.
    const keys = await redisKeys(url, `organism:{${group}*`);
    const client = createRedisClient(url, { maxRetriesPerRequest: 1 });
    try {
      await Promise.all(keys.map((k) => client.del(k)));
    } finally {
      client.disconnect();
    }
    return;
  }
  const raw = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await raw.scan(cursor, 'MATCH', `organism:{${group}*`, 'COUNT', 1000);
      if (keys.length > 0) await raw.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    raw.disconnect();
  }
}

export interface Mailbox {
  port: number;
  /** Subject of every message received, in order. */
  subjects: string[];
  /** Subject of every message held (see mailbox()): received, never answered, so never sent. */
  stalled: string[];
  close(): Promise<void>;
}

/**
 * A real SMTP server on 127.0.0.1. A message whose subject `stall` picks is held: the server takes
 * its data and never answers, so its sender stays half-way through the send until it gives up.
 */
export async function mailbox(stall: (subject: string) => boolean = () => false): Promise<Mailbox> {
  const subjects: string[] = [];
  const stalled: string[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, _session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const subject = /^Subject: (.*)$/m.exec(raw)?.[1]?.trim() ?? '';
        if (stall(subject)) {
          stalled.push(subject);
          return;
        }
        subjects.push(subject);
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as net.AddressInfo).port;
  return {
    port,
    subjects,
    stalled,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export { freePort };

export interface OwnRedis {
  port: number;
  url: string;
  start(): Promise<void>;
  /** SHUTDOWN: the append-only file is flushed, then the server exits. */
  stop(): Promise<void>;
  /** SIGSTOP / SIGCONT: the server keeps its connections but answers nothing until thawed. */
  freeze(): void;
  thaw(): void;
  dispose(): Promise<void>;
}

/** A redis-server of our own (append-only file, fsync always), to restart under the daemons. */
export async function ownRedis(): Promise<OwnRedis> {
  const dir = await mkdtemp(join(tmpdir(), 'organism-redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawnRedisServer(port, dir);
    await until(
      async () => {
        const c = new Redis({
          port,
          host: '127.0.0.1',
          lazyConnect: true,
          maxRetriesPerRequest: 0,
          retryStrategy: () => null,
        });
        c.on('error', () => {});
        try {
          await c.connect();
          return (await c.ping()) === 'PONG';
        } finally {
          c.disconnect();
        }
      },
      'redis-server to start',
      10_000,
    );
  };
  const stop = async () => {
    const running = child;
    if (!running || running.exitCode !== null) return;
    running.kill('SIGCONT'); // a frozen server cannot shut down
    const exited = new Promise((r) => running.once('exit', r));
    running.kill('SIGTERM'); // redis shuts down cleanly on SIGTERM (AOF flushed)
    await exited;
  };
  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    start,
    stop,
    freeze: () => child?.kill('SIGSTOP'),
    thaw: () => child?.kill('SIGCONT'),
    async dispose() {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
