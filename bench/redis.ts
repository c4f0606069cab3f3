/**
 * Scale-out figures, against the redis-server on 127.0.0.1:6379 (REDIS_URL overrides):
 * - redis_two_daemons_msgs_per_s: two processes, one consumer group, ping payloads looping through
 *   the full pipeline (parse, validate, handle, route, shared thread state, XADD, XREADGROUP, XACK);
 *   every handler call is one message.
 * - redis_floor_xadd_per_s: the bare library doing the least work for the same traffic: one
 *   client reads a batch with XREADGROUP, acknowledges it and XADDs the same bytes back, with the
 *   same number of messages circulating. Measured in the same run. Target: at least half the floor.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { encodeMessage } from '../src/bus/redis/codec.ts';
import { buildEnvelope } from '../src/xml/envelope.ts';
import { round, runChild } from './support.ts';

const URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
/** Threads per daemon; two daemons, so this many times two messages circulate. */
const THREADS_PER_DAEMON = 32;
const SECONDS = 3;
const WARM_MS = 1_500;

export async function* run(): AsyncIterable<Record<string, unknown>> {
  const probe = new Redis(URL, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
  probe.on('error', () => {});
  try {
    await probe.connect();
    await probe.ping();
  } catch {
    yield { name: 'redis', skipped: `no redis-server at ${URL}` };
    return;
  } finally {
    probe.disconnect();
  }
  const floor = await floorPerSecond(THREADS_PER_DAEMON * 2);
  const twoDaemons = await twoDaemonsPerSecond();
  yield {
    name: 'redis',
    redis_two_daemons_msgs_per_s: round(twoDaemons, 0),
    redis_floor_xadd_per_s: round(floor, 0),
    ratio: round(twoDaemons / floor, 2),
    target_ratio: 0.5,
    messages_in_flight: THREADS_PER_DAEMON * 2,
  };
}

async function twoDaemonsPerSecond(): Promise<number> {
  const group = `bench-${randomUUID().slice(0, 8)}`;
  const startAt = Date.now() + 3_000; // both connected and subscribed before the first inject
  const args = [URL, group, String(THREADS_PER_DAEMON), String(startAt), String(WARM_MS), String(SECONDS)];
  try {
    const outputs = await Promise.all([
      runChild('./redis-daemon.ts', args),
      runChild('./redis-daemon.ts', args),
    ]);
    let perSecond = 0;
    for (const out of outputs) {
      const { calls, seconds } = JSON.parse(out) as { calls: number; seconds: number };
      perSecond += calls / seconds;
    }
    return perSecond;
  } finally {
    await dropKeys(`organism:{${group}}:*`);
  }
}

/** One client: XREADGROUP a batch, XACK it and XADD the same bytes back; `inFlight` messages circulate. */
async function floorPerSecond(inFlight: number): Promise<number> {
  const client = new Redis(URL, { enableAutoPipelining: true, protocol: 2 });
  const key = `organism-bench-floor:${randomUUID()}`;
  const fields = encodeMessage({
    id: 'bench-1',
    thread: '2b1c8f0e-6a0c-4e52-9a53-4f3f5b3c9d11',
    frame: 'f-1',
    from: 'pinger',
    to: 'pinger',
    tag: 'ping',
    envelope: buildEnvelope(
      { from: 'pinger', to: 'pinger', thread: '2b1c8f0e-6a0c-4e52-9a53-4f3f5b3c9d11' },
      '<ping><text>Hello, Ada!</text><n>1</n></ping>',
    ),
    kind: 'message',
    hop: 1,
    time: Date.now(),
  });
  try {
    await client.call('XGROUP', 'CREATE', key, 'g', '0', 'MKSTREAM');
    await Promise.all(Array.from({ length: inFlight }, () => client.xadd(key, '*', ...fields)));
    let acked = 0;
    const pass = async () => {
      const reply = (await client.call(
        'XREADGROUP',
        'GROUP',
        'g',
        'c',
        'COUNT',
        String(inFlight),
        'STREAMS',
        key,
        '>',
      )) as Array<[string, Array<[string, string[]]>]> | null;
      const entries = reply?.[0]?.[1] ?? [];
      if (entries.length === 0) return;
      await Promise.all([
        client.xack(key, 'g', ...entries.map(([id]) => id)),
        ...entries.map(([, f]) => client.xadd(key, '*', ...f)),
      ]);
      acked += entries.length;
    };
    const warmUntil = Date.now() + WARM_MS;
    while (Date.now() < warmUntil) await pass();
    acked = 0;
    const t0 = process.hrtime.bigint();
    const end = Date.now() + SECONDS * 1000;
    while (Date.now() < end) await pass();
    return acked / (Number(process.hrtime.bigint() - t0) / 1e9);
  } finally {
    await client.del(key);
    client.disconnect();
  }
}

async function dropKeys(pattern: string): Promise<void> {
  const client = new Redis(URL);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      if (keys.length > 0) await client.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    client.disconnect();
  }
}
