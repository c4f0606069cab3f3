/**
 * The Redis Streams transport against the shared Transport contract, on the real redis-server at
 * 127.0.0.1:6379 (CI starts it; never skipped). Every test uses its own consumer group, so its own
 * keys; all of them are removed at the end.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { knownSecrets } from '../../src/audit/redact.ts';
import { answer, CommandBatch, callBatch, unpackState } from '../../src/bus/transport/redis/batch.ts';
import { decodeRecord, encodeRecord, FORMAT_VERSION } from '../../src/bus/transport/redis/codec.ts';
import { BusKeys, RedisTransport } from '../../src/bus/transport/redis/index.ts';
import { until } from '../../src/testing/index.ts';
import { openTransport, redisHarness } from './redis-harness.ts';
import { monitorCommands } from './redis-monitor.ts';
import { testMessage, transportContract } from './transport.contract.ts';

const URL = 'redis://127.0.0.1:6379';
const RUN = `organism-test-${randomUUID().slice(0, 8)}`;
let groups = 0;
const raw = new Redis(URL, { lazyConnect: true, maxRetriesPerRequest: 1 });

afterAll(async () => {
  let cursor = '0';
  do {
    const [next, keys] = await raw.scan(cursor, 'MATCH', `organism:{${RUN}-*`, 'COUNT', 1000);
    if (keys.length > 0) await raw.del(...keys);
    cursor = next;
  } while (cursor !== '0');
  await raw.quit();
});

function open(group: string, consumer: string, maxDeliveries = 3, closeTimeoutMs = 5_000): RedisTransport {
  return openTransport({ url: URL }, group, consumer, maxDeliveries, closeTimeoutMs);
}

transportContract('redis', redisHarness({ url: URL, run: `${RUN}-contract`, raw }));

describe('redis transport', () => {
  it('keeps each listener in its own stream under the group prefix, as JSON a person can read', async () => {
    const group = `${RUN}-${++groups}`;
    const t = open(group, 'c');
    try {
      const m = testMessage('worker', 1);
      await t.publish(m);
      const entries = (await raw.call('XRANGE', `organism:{${group}}:in:worker`, '-', '+')) as [
        string,
        string[],
      ][];
      expect(entries).toHaveLength(1);
      expect(entries[0]![1]).toEqual(['v', FORMAT_VERSION, 'm', JSON.stringify(m)]);
    } finally {
      await t.close();
    }
  });

  it("acknowledges a message once handled() is called, never before its handler's outputs are in Redis", async () => {
    const group = `${RUN}-${++groups}`;
    const t = open(group, 'c');
    try {
      const input = testMessage('a', 1);
      const output = testMessage('b', 2);
      let confirm: (() => void) | undefined;
      t.subscribe('a', (_m, handled) => {
        // As the bus does: outputs handed over, handled() at once, done once they are confirmed.
        const confirmed = t.publish(output);
        handled?.();
        return new Promise<void>((resolve) => {
          confirm = () => void confirmed.then(resolve);
        });
      });
      await t.publish(input);
      await until(() => confirm !== undefined, 'the delivery');
      // Redis as another client sees it, both keys read in one MULTI: from the first moment the
      // input is acknowledged, its output is in the stream (a crash after the ack loses nothing).
      const outputsAtAck = await until(
        async () => {
          const [[, pending], [, length]] = (await raw
            .multi()
            .call('XPENDING', t.keys.inbox('a'), group)
            .xlen(t.keys.inbox('b'))
            .exec()) as [[null, [number]], [null, number]];
          return Number(pending[0]) === 0 && { length };
        },
        { what: 'the ack', intervalMs: 1 },
      );
      expect(outputsAtAck.length).toBe(1);
      // The delivery is still not done: the ack did not wait for it.
      confirm!();
      const [[, fields]] = (await raw.xrange(t.keys.inbox('b'), '-', '+')) as [[string, string[]]];
      expect(JSON.parse(fields[3]!).id).toBe(output.id);
    } finally {
      await t.close();
    }
  });

  it('delivers again an entry whose delivery threw before it started, and holds nothing for it meanwhile', async () => {
    const group = `${RUN}-${++groups}`;
    const t = open(group, 'c');
    try {
      let calls = 0;
      // Not an async function: the first call throws as it is made.
      const deliver = (): Promise<void> => {
        calls++;
        if (calls === 1) throw new Error('thrown before any await');
        return Promise.resolve();
      };
      t.subscribe('a', deliver);
      await t.publish(testMessage('a', 1));
      // Claimed back after claimIdleMs and delivered again: an entry still noted as in flight here
      // would be skipped by every later read and claim.
      await until(() => calls === 2, { what: 'the second delivery', timeoutMs: 10_000 });
      await until(() => t.stats.acked === 1, 'the ack');
    } finally {
      await t.close();
    }
  });

  it('dead-letters an entry that is not a message after maxDeliveries, and the stream flows on', async () => {
    const group = `${RUN}-${++groups}`;
    const t = open(group, 'c');
    try {
      const got: number[] = [];
      t.subscribe('a', async (m) => {
        got.push(m.hop);
      });
      await t.publish(testMessage('a', 1));
      await raw.xadd(`organism:{${group}}:in:a`, '*', 'garbage', 'not a message');
      await t.publish(testMessage('a', 2));
      await until(async () => (await t.deadLetterCount()) === 1, {
        what: 'the dead letter',
        timeoutMs: 15_000,
      });
      const [letter] = await t.deadLetters();
      expect(letter).toMatchObject({ listener: 'a', deliveries: 3, consumer: 'c' });
      expect(letter!.message).toBeUndefined();
      expect(JSON.parse(letter!.raw!)).toEqual(['garbage', 'not a message']);
      expect(letter!.reason).toMatch(/cannot decode: entry format version null/);
      expect(got).toEqual([1, 2]);
      expect(t.stats.deadLettered).toBe(1);
    } finally {
      await t.close();
    }
  });

  it("keeps a secret the daemon knows out of a dead letter's reason (JSON.parse quotes the text it refuses)", async () => {
    const group = `${RUN}-${++groups}`;
    const secret = 'sk-dead-Pw4Rx8Nq2Ty6Zm1K';
    knownSecrets.set('test:dead-letter', [secret]);
    const t = open(group, 'c', 1);
    try {
      t.subscribe('a', async () => {});
      await raw.xadd(`organism:{${group}}:in:a`, '*', 'v', FORMAT_VERSION, 'm', `${secret} and more`);
      await raw.xadd(`organism:{${group}}:in:a`, '*', 'v', secret, 'm', '{}');
      await until(async () => (await t.deadLetterCount()) === 2, {
        what: 'the dead letters',
        timeoutMs: 15_000,
      });
      const reasons = (await t.deadLetters()).map((d) => d.reason);
      expect(reasons.join('\n')).toMatch(/is not JSON/);
      expect(reasons.join('\n')).toMatch(/format version/);
      expect(reasons.join('\n')).toContain('[REDACTED]');
      expect(reasons.join('\n')).not.toMatch(/sk-dead|Pw4Rx8Nq/i);
    } finally {
      knownSecrets.delete('test:dead-letter');
      await t.close();
    }
  });

  it('trims acknowledged entries and never an unacknowledged one', async () => {
    const group = `${RUN}-${++groups}`;
    const t = open(group, 'c');
    try {
      const stream = `organism:{${group}}:in:a`;
      let hold: (() => void) | undefined;
      const got: number[] = [];
      t.subscribe('a', async (m) => {
        got.push(m.hop);
        if (m.hop === 5) await new Promise<void>((r) => (hold = r));
      });
      for (let i = 0; i < 10; i++) await t.publish(testMessage('a', i));
      await until(() => got.length === 10, 'deliveries');
      // Entry 5 is still unacknowledged: trimming may drop 0..4 only.
      await t.reap({ trimNow: true });
      const left = (await raw.call('XRANGE', stream, '-', '+')) as [string, string[]][];
      expect(left.map(([, f]) => JSON.parse(f[3]!).hop)).toEqual([5, 6, 7, 8, 9]);
      hold!();
      await until(
        async () => Number(((await raw.call('XPENDING', stream, group)) as [number])[0]) === 0,
        'acks',
      );
      await t.reap({ trimNow: true });
      expect(await raw.xlen(stream)).toBe(0);
    } finally {
      await t.close();
    }
  });

  it('keeps live work: a slow delivery is not taken by another daemon while its owner lives', async () => {
    const group = `${RUN}-${++groups}`;
    const a = open(group, 'a');
    const b = open(group, 'b');
    try {
      const byA: number[] = [];
      const byB: number[] = [];
      a.subscribe('a', async (m) => {
        byA.push(m.hop);
        await new Promise((r) => setTimeout(r, 1_200)); // four times claimIdleMs
      });
      await a.publish(testMessage('a', 1));
      await until(() => byA.length === 1, 'the slow delivery');
      b.subscribe('a', async (m) => {
        byB.push(m.hop);
      });
      await until(
        async () => Number(((await raw.call('XPENDING', a.keys.inbox('a'), group)) as [number])[0]) === 0,
        'the ack',
      );
      expect(byA).toEqual([1]);
      expect(byB).toEqual([]);
      expect(b.stats.claimed).toBe(0);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('re-creates its stream and group when they vanish (Redis restarted empty) and reads on', async () => {
    const group = `${RUN}-${++groups}`;
    const t = open(group, 'c');
    try {
      const got: number[] = [];
      t.subscribe('a', async (m) => {
        got.push(m.hop);
      });
      await t.publish(testMessage('a', 1));
      await until(() => got.length === 1, 'the first message');
      await raw.del(t.keys.inbox('a'));
      // The stream comes back with the next publish, without the group; the reader recreates it.
      await until(async () => {
        await t.publish(testMessage('a', 2));
        return got.includes(2);
      }, 'a message after the stream vanished');
      const groupsNow = (await raw.call('XINFO', 'GROUPS', t.keys.inbox('a'))) as unknown[][];
      expect(groupsNow.map((g) => g[1])).toEqual([group]);
    } finally {
      await t.close();
    }
  });

  it('never takes back an entry another daemon claimed while it was frozen', async () => {
    const group = `${RUN}-${++groups}`;
    const a = open(group, 'a');
    try {
      let release: (() => void) | undefined;
      a.subscribe('a', () => new Promise<void>((r) => (release = r)));
      await a.publish(testMessage('a', 1));
      await until(() => release !== undefined, 'the delivery');
      const stream = a.keys.inbox('a');
      const owner = async () =>
        ((await raw.call('XPENDING', stream, group, '-', '+', '10')) as [string, string][]).map((r) => r[1]);
      // What another daemon's reaper does once `a` has missed its heartbeats (a long GC pause).
      const pending = (await raw.call('XPENDING', stream, group, '-', '+', '1')) as [string][];
      await raw.call('XCLAIM', stream, group, 'b', '0', pending[0]![0], 'JUSTID');
      // Several heartbeats of `a` later, the entry is still b's, and `a` noticed it lost it.
      await until(() => a.stats.lost === 1, 'a to notice');
      await new Promise((r) => setTimeout(r, 350));
      expect(await owner()).toEqual(['b']);
      expect(a.stats.lost).toBe(1);
      release!();
    } finally {
      await a.close();
    }
  });

  it('makes entries claimable a few missed heartbeats after their daemon stops, not after handler timeouts', () => {
    const t = new RedisTransport({ url: URL, group: 'g' });
    const { heartbeatMs, claimIdleMs, reaperIntervalMs } = t.options;
    expect({ heartbeatMs, claimIdleMs, reaperIntervalMs }).toEqual({
      heartbeatMs: 1_000,
      claimIdleMs: 4_000,
      reaperIntervalMs: 1_000,
    });
    // After a kill -9: claimable within claimIdleMs of the last heartbeat, claimed by the next
    // reaper pass. The target is 10 s.
    expect(claimIdleMs + reaperIntervalMs).toBeLessThanOrEqual(5_000);
    const fast = new RedisTransport({ url: URL, group: 'g', heartbeatMs: 100 });
    expect(fast.options.claimIdleMs).toBe(400);
    expect(() => new RedisTransport({ url: URL, group: 'g', heartbeatMs: 500, claimIdleMs: 500 })).toThrow(
      /claimIdleMs must be more than heartbeatMs/,
    );
    void t.close();
    void fast.close();
  });

  it('refuses a bad url or group name with a clear error', () => {
    expect(() => new RedisTransport({ url: 'http://x', group: 'g' })).toThrow(/redis:\/\/ or rediss:\/\//);
    expect(() => new RedisTransport({ url: URL, group: 'a{b}' })).toThrow(/bus.group must be/);
  });
});

describe('redis command batch', () => {
  function batchFor(
    group: string,
    errors: string[] = [],
  ): { batch: CommandBatch; keys: BusKeys; client: Redis } {
    const client = new Redis(URL);
    const keys = new BusKeys(group);
    const batch = new CommandBatch(client, {
      channel: keys.events,
      origin: 'daemon-a',
      group,
      consumer: 'c',
      formatVersion: '1',
      onError: (e) => errors.push(e.message),
    });
    batch.useThreads({
      threadPrefix: keys.thread(''),
      followingKey: keys.following,
      threadTtlMs: 60_000,
      historyMax: 3,
      historyTtlMs: 60_000,
      historyPrefix: keys.history(''),
    });
    return { batch, keys, client };
  }

  /** A subscriber to the organism's events channel, and what it has heard so far. */
  async function listenToEvents(keys: BusKeys): Promise<{ sub: Redis; got: string[] }> {
    const sub = new Redis(URL);
    const got: string[] = [];
    sub.on('message', (_c: string, text: string) => got.push(text));
    await sub.subscribe(keys.events);
    return { sub, got };
  }

  it('runs one turn of operations as one script, in order; a failing one fails alone', async () => {
    const group = `${RUN}-${++groups}`;
    const errors: string[] = [];
    const { batch, keys, client } = batchFor(group, errors);
    try {
      await raw.set(keys.thread('bad'), 'not a hash');
      batch.hset(keys.thread('good'), 'created', '1');
      batch.inFlight(keys.thread('good'));
      batch.inFlight(keys.thread('good'));
      batch.hop(keys.thread('bad'), false);
      const published = batch.xadd(keys.inbox('x'), encodeRecord(testMessage('x', 1)));
      const badSettle = batch.settle(keys.thread('bad'));
      // Nets out against one of the two publishes above: Redis sees +1 for the pair.
      const goodSettle = batch.settle(keys.thread('good'));
      const load = batch.load(keys.thread('good'), false, '');
      await Promise.all([
        expect(published).resolves.toBe(1),
        expect(badSettle).rejects.toThrow(/WRONGTYPE/),
        expect(goodSettle).resolves.toBe(1),
      ]);
      // The load was queued after the writes: it sees them.
      const record = await load;
      expect(record?.[0]).toBe('1');
      expect(record?.[4]).toBe('1');
      // The hop went in one operation with the XADD after it: the hop failed, the XADD did not.
      expect(errors.some((e) => /^pub: .*WRONGTYPE/.test(e))).toBe(true);
      expect(await raw.xlen(keys.inbox('x'))).toBe(1);
      const info = (await raw.call('INFO', 'commandstats')) as string;
      expect(info).toMatch(/cmdstat_evalsha|cmdstat_eval:/);
    } finally {
      client.disconnect();
    }
  });

  it('answers an XADD that went with nothing, and one that failed by its number among the XADDs', async () => {
    const group = `${RUN}-${++groups}`;
    const { batch, keys, client } = batchFor(group, []);
    try {
      await raw.set(keys.inbox('bad'), 'not a stream');
      const thread = keys.thread('t');
      batch.hset(thread, 'created', '1');
      batch.inFlight(thread);
      await batch.drain();
      const first = batch.xadd(keys.inbox('x'), encodeRecord(testMessage('x', 1)));
      const settled = batch.settle(thread);
      const bad = batch.xadd(keys.inbox('bad'), encodeRecord(testMessage('bad', 2)));
      batch.hop(thread, false);
      batch.history(thread, '{"n":3}', false);
      const sent = batch.xadd(keys.inbox('x'), encodeRecord(testMessage('x', 3)));
      const load = batch.load(thread, false, '');
      const call = batch.take()!;
      const reply = await callBatch(batch.client, call.keys, [call.header, call.args]);
      if (reply === 'moved') throw new Error('moved');
      // Results for the settle and the load only; the second XADD's failure under its number.
      expect(reply[0]).toHaveLength(2);
      expect(reply[0][0]).toBe(0);
      expect(reply[2]).toHaveLength(2);
      expect(reply[2][0]).toBe(2);
      expect(reply[2][1]).toMatch(/WRONGTYPE/);
      answer(call.waiters, reply, () => {});
      await expect(first).resolves.toBe(1);
      await expect(settled).resolves.toBe(0);
      await expect(bad).rejects.toThrow(/WRONGTYPE/);
      await expect(sent).resolves.toBe(1);
      expect((await load)?.[2]).toBe('1');
      expect(await raw.xlen(keys.inbox('x'))).toBe(2);
    } finally {
      client.disconnect();
    }
  });

  it("acks a turn's entries of one stream with one XACK and one promise, and the next turn's with another", async () => {
    const group = `${RUN}-${++groups}`;
    const { batch, keys, client } = batchFor(group, []);
    try {
      const stream = keys.inbox('x');
      await raw.xgroup('CREATE', stream, group, '0', 'MKSTREAM');
      for (let i = 0; i < 3; i++)
        await raw.xadd(stream, '*', 'v', FORMAT_VERSION, 'm', encodeRecord(testMessage('x', i)));
      const ids = (
        (await raw.xreadgroup('GROUP', group, 'c', 'STREAMS', stream, '>')) as [
          string,
          [string, string[]][],
        ][]
      )[0]![1].map(([id]) => id);
      const first = batch.xack(stream, ids[0]!);
      expect(batch.xack(stream, ids[1]!)).toBe(first);
      await first;
      expect(((await raw.xpending(stream, group)) as [number])[0]).toBe(1);
      const next = batch.xack(stream, ids[2]!);
      expect(next).not.toBe(first);
      await next;
      expect(((await raw.xpending(stream, group)) as [number])[0]).toBe(0);
    } finally {
      client.disconnect();
    }
  });

  it("writes a message's frame, hop, history entry and XADD, and what comes between messages, in the order they were made", async () => {
    const group = `${RUN}-${++groups}`;
    const { batch, keys, client } = batchFor(group);
    const { sub, got } = await listenToEvents(keys);
    try {
      const t = keys.thread('t');
      const stream = keys.inbox('p');
      batch.hset(t, 'created', '1');
      batch.follow(t, Date.now() + 60_000, 60_000);
      // One message: all four parts.
      batch.frame(t, 'f:a', '["p","api","",0]');
      batch.hop(t, false);
      batch.history(t, '{"n":1}', false);
      const first = batch.xadd(stream, encodeRecord(testMessage('p', 1, { thread: 't', frame: 'a' })));
      // A hop and entry with no XADD (a message to an ingress), then a frame: three parts of two messages.
      batch.hop(t, false);
      batch.history(t, '{"n":2}', false);
      batch.frame(t, 'f:b', '["p","api","",0]');
      batch.prune(t, 'a'); // not part of a message: the open one goes first, alone
      // A frame opened, then deleted before its message goes: the delete comes after the write.
      batch.frame(t, 'f:c', '["p","api","",0]');
      batch.prune(t, 'c');
      batch.prune(t, 'c'); // no record left: no change
      batch.hop(t, false);
      batch.history(t, '{"n":3}', false);
      const second = batch.xadd(stream, encodeRecord(testMessage('p', 2, { thread: 't', frame: 'b' })));
      await expect(Promise.all([first, second])).resolves.toEqual([1, 1]);
      expect(await raw.hgetall(t)).toMatchObject({
        created: '1',
        hops: '3',
        'f:b': '["p","api","",0]',
      });
      expect(await raw.hexists(t, 'f:a')).toBe(0);
      expect(await raw.hexists(t, 'f:c')).toBe(0);
      expect(await raw.lrange(keys.history('t'), 0, -1)).toEqual(['{"n":1}', '{"n":2}', '{"n":3}']);
      expect(await raw.xlen(stream)).toBe(2);
      await until(() => got.length === 1, 'the events message');
      expect(
        got[0]!
          .split('\n')
          .slice(1)
          .map((line) => line.split('|')[0]),
      ).toEqual(['1', '2', '3']);
      // The records deleted, on the partition's changes list (the second delete of c found none).
      expect(await raw.lrange(keys.changes(0), 0, -1)).toEqual(['p|a|t', 'p|c|t']);
    } finally {
      sub.disconnect();
      client.disconnect();
    }
  });

  it('reads entries with their thread state, none where it cannot find the thread or the message carries its frame, and odd entries raw', async () => {
    const group = `${RUN}-${++groups}`;
    const { batch, keys, client } = batchFor(group);
    try {
      const stream = keys.inbox('w');
      await raw.call('XGROUP', 'CREATE', stream, group, '0', 'MKSTREAM');
      batch.hset(keys.thread('t-1'), 'created', '5');
      batch.hset(keys.thread('t-1'), 'hops', '2');
      batch.hset(keys.thread('t-1'), 'f:f-1', JSON.stringify(['w', 'api', '', 0]));
      await batch.xadd(stream, encodeRecord(testMessage('w', 1, { thread: 't-1', frame: 'f-1' })));
      // A thread id JSON escapes: the script cannot take it from the text, so it loads nothing.
      await batch.xadd(stream, encodeRecord(testMessage('w', 2, { thread: 't"2', frame: 'f-2' })));
      await raw.xadd(stream, '*', 'not', 'a message');
      await batch.xadd(stream, encodeRecord(testMessage('w', 3, { thread: 't-none', frame: 'f-3' })));
      // A message that carries its frame: the daemon's own copy of the thread may do, none is read.
      await batch.xadd(
        stream,
        encodeRecord(testMessage('w', 4, { thread: 't-1', frame: 'f-4', frameDepth: 0 })),
      );
      const entries = await batch.read(stream, 10);
      expect(entries).toHaveLength(5);
      const [one, two, three, four, five] = entries;
      expect(typeof one![1]).toBe('string');
      expect(decodeRecord(one![1] as string).thread).toBe('t-1');
      const state = unpackState(one![2] as string);
      expect(state?.[0]).toBe('5');
      expect(state?.[2]).toBe('2');
      expect(JSON.parse(state?.[5] ?? 'null')).toEqual(['w', 'api', '', 0]);
      expect(state?.[6]).toBeNull();
      expect(two).toHaveLength(3);
      expect(unpackState(two![2] as string | null)).toBeUndefined();
      expect(three![1]).toEqual(['not', 'a message']);
      // A thread Redis does not have: loaded, and known to be missing.
      expect(unpackState(four![2] as string)).toBeNull();
      expect(decodeRecord(five![1] as string).frameDepth).toBe(0);
      expect(unpackState(five![2] as string | null)).toBeUndefined();
      const again = await batch.read(stream, 10);
      expect(again).toEqual([]);
    } finally {
      client.disconnect();
    }
  });

  it('announces the history entries of a followed thread, idle and stop notices of a turn in one message, sender first', async () => {
    const group = `${RUN}-${++groups}`;
    const { batch, keys, client } = batchFor(group);
    const { sub, got } = await listenToEvents(keys);
    try {
      batch.hset(keys.thread('t'), 'created', '1');
      batch.inFlight(keys.thread('t'));
      // Entries of a thread nobody follows are kept, numbered, and not announced.
      batch.history(keys.thread('t'), '{"n":0}', false);
      await batch.drain();
      batch.follow(keys.thread('t'), Date.now() + 60_000, 60_000); // followed from now on
      for (let i = 1; i <= 5; i++) batch.history(keys.thread('t'), `{"n":${i}}`, false);
      batch.event('{"t":"t","k":"s"}');
      await expect(batch.settle(keys.thread('t'))).resolves.toBe(0);
      await until(() => got.length === 1, 'the events message');
      expect(got[0]!.split('\n')).toEqual([
        'daemon-a',
        '2|{"t":"t","k":"m","e":{"n":1}}',
        '3|{"t":"t","k":"m","e":{"n":2}}',
        '4|{"t":"t","k":"m","e":{"n":3}}',
        '5|{"t":"t","k":"m","e":{"n":4}}',
        '6|{"t":"t","k":"m","e":{"n":5}}',
        '{"t":"t","k":"s"}',
        '{"t":"t","k":"i","n":6}',
      ]);
      // Kept to about historyMax (3 here, trimmed once it is 8 over).
      expect(await raw.llen(keys.history('t'))).toBe(6);
      expect(await raw.pttl(keys.history('t'))).toBeGreaterThan(0);
    } finally {
      sub.disconnect();
      client.disconnect();
    }
  });

  it('writes a hop with three commands (hop count, history entry, XADD), and counts entries trimmed off the history', async () => {
    const group = `${RUN}-${++groups}`;
    const { batch, keys, client } = batchFor(group);
    const { sub, got } = await listenToEvents(keys);
    const thread = keys.thread('t');
    const mine = [thread, keys.history('t'), keys.inbox('x')];
    // What the script ran on this thread's keys and the stream, and the marks echoed after a turn.
    const ran: string[] = [];
    const monitor = await monitorCommands(raw, (args, source) => {
      if (source === 'lua' && args.some((a) => mine.includes(a))) ran.push(args[0]!.toUpperCase());
      if (args[0]?.toLowerCase() === 'echo' && args[1] === group) ran.push('mark');
    });
    // The commands the script ran for one turn, in order.
    const turn = async (): Promise<string[]> => {
      await batch.drain();
      await client.echo(group);
      await until(() => ran.includes('mark'), 'the turn monitored');
      return ran.splice(0).filter((c) => c !== 'mark');
    };
    const hop = (n: number): Promise<number> => {
      batch.hop(thread, false);
      batch.history(thread, `{"n":${n}}`, false);
      return batch.xadd(keys.inbox('x'), encodeRecord(testMessage('x', n)));
    };
    try {
      batch.hset(thread, 'created', '1');
      batch.inFlight(thread);
      await turn();
      // The first hop and entry give the hop count and the history list their expiry.
      await hop(1);
      expect(await turn()).toEqual(['HINCRBY', 'PEXPIRE', 'RPUSH', 'PEXPIRE', 'XADD']);
      await hop(2);
      expect(await turn()).toEqual(['HINCRBY', 'RPUSH', 'XADD']);
      // 14 more entries: the list goes over historyMax + 8 at 12 and is trimmed to 3; the idle
      // notice and a load still number all 16.
      for (let i = 3; i <= 16; i++) batch.history(thread, `{"n":${i}}`, false);
      await expect(batch.settle(thread)).resolves.toBe(0);
      await until(() => got.length === 1, 'the idle notice');
      expect(got[0]!.split('\n')).toEqual(['daemon-a', '{"t":"t","k":"i","n":16}']);
      expect(await raw.lrange(keys.history('t'), 0, 0)).toEqual(['{"n":10}']);
      expect(await raw.llen(keys.history('t'))).toBe(7);
      const record = (await batch.load(thread, false, '')) as string[];
      expect(record[7]).toBe('16');
    } finally {
      monitor.stop();
      sub.disconnect();
      client.disconnect();
    }
  });

  it("sends a hop that opens no frame as the script's six-argument 'send', each expiry pushed out as asked", async () => {
    const group = `${RUN}-${++groups}`;
    const { batch, keys, client } = batchFor(group);
    const thread = keys.thread('t');
    const mine = [thread, keys.history('t'), keys.inbox('x')];
    // The operations of each script call this client sent, and what the script ran on the keys.
    const calls: string[][] = [];
    const ran: string[] = [];
    const monitor = await monitorCommands(raw, (args, source) => {
      if (source === 'lua' && args.some((a) => mine.includes(a))) ran.push(args[0]!.toUpperCase());
      if (source !== 'lua' && /^evalsha$|^eval$/i.test(args[0]!) && args.includes(group)) calls.push(args);
      if (args[0]?.toLowerCase() === 'echo' && args[1] === group) ran.push('mark');
    });
    const turn = async (): Promise<string[]> => {
      await batch.drain();
      await client.echo(group);
      await until(() => ran.includes('mark'), 'the turn monitored');
      return ran.splice(0).filter((c) => c !== 'mark');
    };
    const hop = (n: number, refreshHop: boolean, refreshHistory: boolean): Promise<number> => {
      batch.hop(thread, refreshHop);
      batch.history(thread, `{"n":${n}}`, refreshHistory);
      return batch.xadd(keys.inbox('x'), encodeRecord(testMessage('x', n)));
    };
    try {
      batch.hset(thread, 'created', '1');
      await turn();
      await hop(1, false, false);
      expect(await turn()).toEqual(['HINCRBY', 'PEXPIRE', 'RPUSH', 'PEXPIRE', 'XADD']);
      const args = calls.at(-1)!;
      // After the header (ARGV[1..11]): the operation and its five arguments, nothing else.
      const ops = args.slice(3 + Number(args[2]) + 11);
      expect(ops.slice(0, 5)).toEqual(['send', '1', '0', '{"n":1}', '2']);
      expect(ops).toHaveLength(6);
      await hop(2, true, false);
      expect(await turn()).toEqual(['HINCRBY', 'PEXPIRE', 'RPUSH', 'XADD']);
      await hop(3, false, true);
      expect(await turn()).toEqual(['HINCRBY', 'RPUSH', 'PEXPIRE', 'XADD']);
      await hop(4, true, true);
      expect(await turn()).toEqual(['HINCRBY', 'PEXPIRE', 'RPUSH', 'PEXPIRE', 'XADD']);
      // A hop that opens a frame goes as the whole pub.
      batch.frame(thread, 'f:a', '["x","y","",1]');
      await hop(5, false, false);
      expect(await turn()).toEqual(['HSET', 'HINCRBY', 'RPUSH', 'XADD']);
      expect(calls.at(-1)!).toContain('pub');
      expect(await raw.llen(keys.history('t'))).toBe(5);
      expect(await raw.hget(thread, 'hops')).toBe('5');
      expect(await raw.xlen(keys.inbox('x'))).toBe(5);
    } finally {
      monitor.stop();
      client.disconnect();
    }
  });

  it('nets a settle out against a publish of the same thread in one batch, and announces no idle for it', async () => {
    const group = `${RUN}-${++groups}`;
    const { batch, keys, client } = batchFor(group);
    const { sub, got } = await listenToEvents(keys);
    try {
      const t = keys.thread('busy');
      batch.hset(t, 'created', '1');
      batch.inFlight(t);
      await batch.drain();
      expect(await raw.hget(t, 'inflight')).toBe('1');
      // A handler's output published and its input settled in the same turn: nothing changes.
      batch.inFlight(t);
      await expect(batch.settle(t)).resolves.toBe(1);
      await batch.drain();
      expect(await raw.hget(t, 'inflight')).toBe('1');
      // Two settles against one publish: one nets out, the other reaches zero and is announced.
      batch.inFlight(t);
      const first = batch.settle(t);
      const second = batch.settle(t);
      await expect(first).resolves.toBe(1);
      await expect(second).resolves.toBe(0);
      expect(await raw.hget(t, 'inflight')).toBe('0');
      await until(() => got.length === 1, 'the idle notice');
      expect(got[0]!.split('\n')).toEqual(['daemon-a', '{"t":"busy","k":"i","n":0}']);
    } finally {
      sub.disconnect();
      client.disconnect();
    }
  });

  it('sends a full batch early, and its reads with the rest of the turn, sized when they go', async () => {
    const group = `${RUN}-${++groups}`;
    const { batch, keys, client } = batchFor(group);
    try {
      const stream = keys.inbox('r');
      await raw.call('XGROUP', 'CREATE', stream, group, '0', 'MKSTREAM');
      let wanted = 1;
      const read = batch.read(stream, () => wanted);
      // Enough writes to fill a batch: they go at once, without the read.
      const writes: Array<Promise<number>> = [];
      for (let i = 0; i < 400; i++) writes.push(batch.xadd(stream, encodeRecord(testMessage('r', i))));
      wanted = 5;
      const entries = await read;
      await Promise.all(writes);
      // Queued first, the read ran after every write of the turn (else it would find nothing), and
      // took as many as were wanted when its batch went out.
      expect(entries).toHaveLength(5);
      expect(await raw.xlen(stream)).toBe(400);
    } finally {
      client.disconnect();
    }
  });

  it('settles a thread that is gone without making it up, and sends a huge turn in pieces', async () => {
    const group = `${RUN}-${++groups}`;
    const { batch, keys, client } = batchFor(group);
    try {
      await expect(batch.settle(keys.thread('gone'))).resolves.toBe(0);
      expect(await raw.exists(keys.thread('gone'))).toBe(0);
      const key = keys.thread('big');
      for (let i = 0; i < 30_000; i++) batch.hset(key, `f${i}`, 'x');
      // Answers stay with their questions across the pieces.
      const loads: Array<Promise<unknown>> = [];
      for (let i = 0; i < 3_000; i++) {
        batch.hset(keys.thread(`n${i}`), 'created', String(i));
        loads.push(batch.load(keys.thread(`n${i}`), false, '').then((r) => r?.[0]));
      }
      await batch.drain();
      expect(await raw.hlen(key)).toBe(30_000);
      expect(await Promise.all(loads)).toEqual(Array.from({ length: 3_000 }, (_, i) => String(i)));
    } finally {
      client.disconnect();
    }
  });
});
