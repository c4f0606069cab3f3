/**
 * What several daemons on one Redis share besides the streams, in one process for speed (each
 * "daemon" is its own Bus, transport, thread store and dispatcher, as in separate processes), on
 * the real redis-server at 127.0.0.1:6379: threads any daemon can continue, hop budgets counted
 * across daemons, once-only side effects, rate-limit buckets and revocations.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { Bus } from '../../src/bus/bus.ts';
import { createRedisBusBackend, type RedisBusBackend } from '../../src/bus/transport/redis/backend.ts';
import type { BusSection } from '../../src/config/types.ts';
import { defineListener } from '../../src/listener/types.ts';
import { runtimeStateFor } from '../../src/state/index.ts';
import { testConfig } from '../../src/testing/index.ts';
import { EFFECT_TTL_SECONDS, effectNames, stateEffectLog } from '../../src/tools/once.ts';
import { createToolServices, type Resources } from '../../src/tools/services.ts';
import { REVOCATION_POLL_MS, revokeShared, unrevokeShared } from '../../src/tools/shared-state.ts';
import type { ToolDefinition, ToolResult } from '../../src/tools/types.ts';
import { listenerSpec, settled, TEST_BUS, TEST_LIMITS, textPayload } from '../helpers/bus.ts';
import { makeDispatcher, noopTool } from '../tools/runtime/helpers.ts';
import { dropGroup, SHARED_REDIS, until } from './redis-support/harness.ts';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

function newGroup(): string {
  const group = `shared-${randomUUID().slice(0, 8)}`;
  cleanups.push(() => dropGroup(SHARED_REDIS, group));
  return group;
}

function busSection(group: string): BusSection {
  return { ...TEST_BUS, transport: 'redis', url: SHARED_REDIS, group };
}

/** One "daemon": a bus on the Redis transport with the shared thread store. */
function daemon(group: string, listeners: Parameters<typeof listenerSpec>[0][], maxHops = 1000): Bus {
  return daemonWithBackend(group, listeners, maxHops).bus;
}

function daemonWithBackend(
  group: string,
  listeners: Parameters<typeof listenerSpec>[0][],
  maxHops = 1000,
): { bus: Bus; backend: RedisBusBackend } {
  const limits = { ...TEST_LIMITS, max_thread_hops: maxHops };
  const bus = busSection(group);
  const backend = createRedisBusBackend({ bus, limits, listeners: [] }, pino({ level: 'silent' }));
  const b = new Bus(listeners.map(listenerSpec), backend.transport, {
    limits,
    bus,
    logger: pino({ level: 'silent' }),
    threadStore: backend.threadStore,
  });
  b.start();
  cleanups.push(async () => {
    await b.stop(200);
    await backend.close();
  });
  return { bus: b, backend };
}

/** Services whose organism runs its bus on Redis (so tools share state through it). */
function sharedServices(group: string): {
  services: ReturnType<typeof createToolServices>['services'];
  resources: Resources;
} {
  const config = testConfig({
    organism: { data_dir: '/tmp/data', workspace: '/tmp' },
    bus: busSection(group),
  });
  const made = createToolServices(config);
  cleanups.push(() => made.resources.closeAll());
  return made;
}

describe('shared thread state', () => {
  it('lets any daemon continue a thread another daemon started', async () => {
    const group = newGroup();
    const seen: string[] = [];
    const echo = (who: string) => ({
      name: 'echo',
      definition: defineListener<{ text: string }>({
        payload: textPayload('say'),
        handler: (p, ctx) => {
          seen.push(`${who}:${p.text}`);
          return ctx.respond(`<said><text>${p.text}</text></said>`);
        },
      }),
    });
    const a = daemon(group, [echo('a')]);
    const b = daemon(group, [echo('b')]);
    const { thread } = await a.inject({ to: 'echo', payload: '<say><text>one</text></say>' });
    await until(async () => a.thread(thread)?.status === 'idle' && seen.length === 1, 'the first message');
    // Continued through the other daemon, which never saw it begin.
    await b.inject({ to: 'echo', thread, payload: '<say><text>two</text></say>' });
    // Read as the API reads a thread: loaded first, so each daemon shows all of it.
    const messages = await until(async () => {
      await a.loadThread(thread);
      const view = a.thread(thread);
      return view?.messages.length === 4 && view.status === 'idle' ? view.messages : undefined;
    }, 'the thread to continue');
    await b.loadThread(thread);
    expect(messages.map((m) => `${m.from}->${m.to}`)).toEqual([
      'api->echo',
      'echo->api',
      'api->echo',
      'echo->api',
    ]);
    expect(b.thread(thread)?.messages.map((m) => m.id)).toEqual(messages.map((m) => m.id));
    expect(seen.map((s) => s.split(':')[1])).toEqual(['one', 'two']);
  });

  it('gives an agent on a daemon that missed history events the whole history before it delivers', async () => {
    const group = newGroup();
    // An agent reads its thread's history, so its deliveries bring the daemon's copy up to date.
    const echo = {
      name: 'echo',
      config: { agent: true },
      definition: defineListener<{ text: string }>({
        payload: textPayload('say'),
        handler: (p, ctx) => ctx.respond(`<said><text>${p.text}</text></said>`),
      }),
    };
    const a = daemon(group, [echo]);
    const b = daemonWithBackend(group, [echo]);
    await a.stopReading('echo'); // b handles everything
    const { thread } = await b.bus.inject({ to: 'echo', payload: '<say><text>one</text></say>' });
    await until(async () => b.bus.thread(thread)?.status === 'idle', 'the first answer');
    // b hears no more events: what a writes now reaches b only through Redis.
    await b.backend.threadStore.subscriber!.unsubscribe();
    await a.inject({ to: 'echo', thread, payload: '<say><text>two</text></say>' });
    const messages = await until(async () => {
      const view = b.bus.thread(thread);
      return view?.messages.length === 4 && view.status === 'idle' ? view.messages : undefined;
    }, 'b to answer the second message');
    expect(messages.map((m) => `${m.from}->${m.to}:${m.payload.replace(/<[^>]+>/g, '')}`)).toEqual([
      'api->echo:one',
      'echo->api:one',
      'api->echo:two',
      'echo->api:two',
    ]);
  });

  it('makes a watched thread whole before telling its watchers it is idle, when this daemon settles it last', async () => {
    const group = newGroup();
    // first (on b) hands work to second (on a, slow) and third (on b, which answers meanwhile).
    const first = {
      name: 'first',
      peers: ['second', 'third'],
      definition: defineListener<{ text: string }>({
        payload: textPayload('one'),
        handler: (p, ctx) => [ctx.send('second', { text: p.text }), ctx.send('third', { text: p.text })],
      }),
    };
    const wait = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
    const second = {
      name: 'second',
      definition: defineListener<{ text: string }>({ payload: textPayload('two'), handler: () => wait(400) }),
    };
    const third = {
      name: 'third',
      definition: defineListener<{ text: string }>({
        payload: textPayload('three'),
        handler: async (p, ctx) => {
          await wait(100);
          return ctx.respond(`<answer><text>${p.text}</text></answer>`);
        },
      }),
    };
    const a = daemonWithBackend(group, [first, second, third]);
    const b = daemon(group, [first, second, third]);
    await a.bus.stopReading('first');
    await a.bus.stopReading('third');
    await b.stopReading('second');
    // a hears no events: what b records reaches a only through Redis.
    await a.backend.threadStore.subscriber!.unsubscribe();
    const { thread } = await a.bus.inject({ to: 'first', payload: '<one><text>x</text></one>' });
    const messages = await settled(a.bus, thread);
    // third's answer was recorded on b after a took second's message, and before a settled the thread.
    expect(messages.map((m) => `${m.from}->${m.to}`)).toEqual([
      'api->first',
      'first->second',
      'first->third',
      'third->first',
    ]);
  });

  it('gives a new watcher the entries other daemons recorded before it followed, while the thread still runs', async () => {
    const group = newGroup();
    const step = {
      name: 'step',
      peers: ['slow'],
      definition: defineListener<{ text: string }>({
        payload: textPayload('one'),
        handler: (p, ctx) => ctx.send('slow', { text: p.text }),
      }),
    };
    const slow = {
      name: 'slow',
      definition: defineListener<{ text: string }>({
        payload: textPayload('two'),
        handler: () => new Promise<void>((r) => setTimeout(r, 1_500)),
      }),
    };
    const a = daemon(group, [step, slow]);
    const b = daemon(group, [step, slow]);
    await a.stopReading('step');
    await a.stopReading('slow');
    const { thread } = await a.inject({ to: 'step', payload: '<one><text>x</text></one>' });
    // b records step->slow while nobody follows the thread: no daemon is told of it.
    const raw = new Redis(SHARED_REDIS);
    cleanups.push(async () => raw.disconnect());
    await until(async () => (await raw.llen(`organism:{${group}}:history:${thread}`)) >= 2, 'b to send');
    const seen: string[] = [];
    let idle = false;
    const unwatch = a.watch(thread, {
      onMessage: (m) => seen.push(`${m.from}->${m.to}${idle ? ' (after idle)' : ''}`),
      onIdle: () => {
        idle = true;
      },
    });
    cleanups.push(async () => unwatch());
    await until(async () => seen.length > 0 || undefined, 'the entry b recorded');
    // Before slow's handler is done (it used to come only with the idle notice).
    expect(seen).toEqual(['step->slow']);
    // Still running: slow's message is counted in flight in Redis, and b shows the thread active.
    expect(await raw.hget(`organism:{${group}}:thread:${thread}`, 'inflight')).toBe('1');
    expect(b.thread(thread)?.status).toBe('active');
  });

  it('counts a thread hops across daemons and stops it at max_thread_hops', async () => {
    const group = newGroup();
    let calls = 0;
    const loop = {
      name: 'looper',
      peers: ['looper'],
      definition: defineListener<{ text: string }>({
        payload: textPayload('loop'),
        handler: (p, ctx) => {
          calls++;
          return ctx.send('looper', { text: p.text });
        },
      }),
    };
    const a = daemon(group, [loop], 20);
    daemon(group, [loop], 20);
    const { thread } = await a.inject({ to: 'looper', payload: '<loop><text>x</text></loop>' });
    await until(async () => a.thread(thread)?.status === 'stopped', 'the budget to stop the loop');
    await new Promise((r) => setTimeout(r, 300));
    // Either daemon may have stopped it: read the thread as the API does, loaded first.
    await a.loadThread(thread);
    const view = a.thread(thread)!;
    // Each daemon refreshes the shared count on delivery: the loop stops at the limit, give or take
    // the hops the other daemon took since its last refresh.
    expect(calls).toBeGreaterThanOrEqual(19);
    expect(calls).toBeLessThanOrEqual(22);
    expect(view.messages.at(-1)?.payload).toContain('budget');
  });

  it('answers calls across daemons into a frame its message carried, and leaves no frame in Redis', async () => {
    const group = newGroup();
    const got: string[] = [];
    // boss: sent by the API (its frame travels in the message), calls worker five times, one
    // at a time, each answer arriving on whichever daemon reads it, then answers the API.
    const boss = {
      name: 'boss',
      peers: ['worker'],
      definition: defineListener<{ text: string }>({
        payload: textPayload('task'),
        handler: (p, ctx) => ctx.send('worker', { text: `${p.text}-1` }),
        onReply: (reply, ctx) => {
          const text = String(reply.payload.text);
          got.push(text);
          if (got.length < 5) return ctx.send('worker', { text: `job-${got.length + 1}` });
          return ctx.respond('<report><text>done</text></report>');
        },
      }),
    };
    const worker = (who: string) => ({
      name: 'worker',
      definition: defineListener<{ text: string }>({
        payload: textPayload('work'),
        handler: (p, ctx) => ctx.respond(`<worked><text>${p.text}@${who}</text></worked>`),
      }),
    });
    const a = daemon(group, [boss, worker('a')]);
    daemon(group, [boss, worker('b')]);
    const { thread } = await a.inject({ to: 'boss', payload: '<task><text>job</text></task>' });
    await until(
      async () => {
        await a.loadThread(thread);
        return a.thread(thread)?.messages.at(-1)?.payload.includes('done') === true;
      },
      'the report',
      10_000,
    );
    expect(got.map((t) => t.split('@')[0])).toEqual(['job-1', 'job-2', 'job-3', 'job-4', 'job-5']);
    await until(async () => a.thread(thread)?.status === 'idle', 'the thread to go idle');
    const raw = new Redis(SHARED_REDIS);
    try {
      const frames = Object.keys(await raw.hgetall(`organism:{${group}}:thread:${thread}`)).filter((f) =>
        f.startsWith('f:'),
      );
      expect(frames).toEqual([]);
    } finally {
      raw.disconnect();
    }
  });

  it('stops a thread killed on one daemon on the others too, though they deliver it from their own copy', async () => {
    const group = newGroup();
    const calls = { a: 0, b: 0 };
    // Slow enough to be killed half-way (a chain of sends ends at max_call_depth, 100 here).
    const loop = (on: 'a' | 'b') => ({
      name: 'looper',
      peers: ['looper'],
      definition: defineListener<{ text: string }>({
        payload: textPayload('loop'),
        handler: async (p, ctx) => {
          calls[on]++;
          await new Promise((r) => setTimeout(r, 10));
          return ctx.send('looper', { text: p.text });
        },
      }),
    });
    const a = daemon(group, [loop('a')]);
    const b = daemon(group, [loop('b')]);
    const { thread } = await a.inject({ to: 'looper', payload: '<loop><text>x</text></loop>' });
    await until(async () => calls.a > 0 && calls.b > 0, 'the loop to run on both daemons', 10_000);
    expect(a.kill(thread)?.status).toBe('stopped');
    await until(
      async () => b.thread(thread)?.status === 'stopped',
      'the stop to reach the other daemon',
      5_000,
    );
    // A message already running or read when the stop arrived may still finish; nothing after it.
    await new Promise((r) => setTimeout(r, 200));
    const after = calls.a + calls.b;
    await new Promise((r) => setTimeout(r, 300));
    expect(calls.a + calls.b).toBe(after);
    expect(after).toBeLessThan(90);
  });

  it('keeps no frame of a thread that goes back and forth between daemons', async () => {
    const group = newGroup();
    // ping runs on a only, pong on b only: every hop is taken by the other daemon.
    const player = (name: string, other: string) => ({
      name,
      peers: [other],
      definition: defineListener<{ text: string }>({
        payload: textPayload(name),
        handler: (p, ctx) => ctx.send(other, { text: p.text }),
      }),
    });
    const players = [player('ping', 'pong'), player('pong', 'ping')];
    // max_call_depth (100) ends each exchange: every send is one frame deeper.
    const a = daemonWithBackend(group, players);
    const b = daemonWithBackend(group, players);
    await a.bus.stopReading('pong');
    await b.bus.stopReading('ping');
    const threads = await Promise.all(
      Array.from({ length: 4 }, () => a.bus.inject({ to: 'ping', payload: '<ping><text>x</text></ping>' })),
    );
    // Each exchange is at least 101 messages long (depth 0 to 100), read whole from Redis.
    const handled = await until(async () => {
      let n = 0;
      for (const { thread } of threads) {
        await a.bus.loadThread(thread);
        n += a.bus.thread(thread)?.messages.filter((m) => m.kind === 'message').length ?? 0;
      }
      return n >= 4 * 101 ? n : undefined;
    }, 'every exchange to reach max_call_depth');
    expect(handled).toBe(4 * 101);
    await new Promise((r) => setTimeout(r, 300)); // the last refusals settle
    // Each daemon published about 200 of those messages into frames the other one handled, and
    // keeps none of them (it used to keep every one). Left: per thread at most the frame of the
    // send refused for depth, until the idle thread is forgotten.
    const frames = (d: { bus: Bus }) => d.bus.stats().frames;
    expect(frames(a)).toBeLessThanOrEqual(threads.length);
    expect(frames(b)).toBeLessThanOrEqual(threads.length);
  });

  it('sees a watched thread finish on another daemon (send --wait works on any daemon)', async () => {
    const group = newGroup();
    const slow = {
      name: 'slow',
      definition: defineListener<{ text: string }>({
        payload: textPayload('work'),
        handler: async (p, ctx) => {
          await new Promise((r) => setTimeout(r, 50));
          return ctx.respond(`<done><text>${p.text}</text></done>`);
        },
      }),
    };
    const a = daemon(group, [slow]);
    const b = daemon(group, [slow]);
    // Only b will take work: a stops reading.
    await a.stopReading('slow');
    const { thread } = await a.inject({ to: 'slow', payload: '<work><text>w</text></work>' });
    // The watcher on a learns of the answer and of the idle thread, though b did the work.
    const messages = await settled(a, thread, 10_000);
    expect(messages.map((m) => `${m.from}->${m.to}`)).toEqual(['api->slow', 'slow->api']);
    expect(a.thread(thread)?.status).toBe('idle');
    expect(b.thread(thread)?.status).toBe('idle');
  });
});

describe('once-only effects', () => {
  function sendTool(): ToolDefinition & { sent: string[] } {
    const sent: string[] = [];
    return {
      sent,
      name: 'send_thing',
      description: 'Sends a thing; for tests.',
      args: { type: 'object', properties: { what: { type: 'string' } }, required: ['what'] },
      readOnly: false,
      capability: 'post_webhook',
      source: 'native',
      sideEffect: true,
      run: async (args: { what: string }) => {
        await new Promise((r) => setTimeout(r, 100));
        sent.push(args.what);
        return { sent: args.what, n: sent.length };
      },
    };
  }

  it('runs a side-effecting call once per call id, across daemons, and answers repeats with the first result', async () => {
    const group = newGroup();
    const tool = sendTool();
    const grants = [{ name: 'alice', tools: ['send_thing'] }];
    const one = makeDispatcher([tool], grants, { services: sharedServices(group).services });
    const two = makeDispatcher([tool], grants, { services: sharedServices(group).services });
    const callId = `msg-${randomUUID()}.call-1`;
    const request = { tool: 'send_thing', args: { what: 'mail' }, listener: 'alice', thread: 't', callId };
    // At the same time on two daemons (a redelivery while the first run is still going), then again.
    const [first, second] = await Promise.all([one.call(request), two.call(request)]);
    const third = await one.call(request);
    expect(tool.sent).toEqual(['mail']);
    expect(first).toEqual({ status: 'ok', tool: 'send_thing', value: { sent: 'mail', n: 1 } });
    expect(second).toEqual(first);
    expect(third).toEqual(first);
    // Another call id acts again.
    await one.call({ ...request, callId: `${callId}x` });
    expect(tool.sent).toEqual(['mail', 'mail']);
  });

  it('answers EffectInDoubt, without acting, when the first run died before reporting', async () => {
    const group = newGroup();
    const { services } = sharedServices(group);
    const state = await runtimeStateFor(services);
    const log = stateEffectLog(state);
    const callId = `msg-${randomUUID()}.call-1`;
    expect(await log.begin(callId, 'send_thing', 200)).toBeUndefined(); // the first run starts, then "dies"
    const answer = (await log.begin(callId, 'send_thing', 200)) as ToolResult;
    expect(answer).toMatchObject({ status: 'error', error: { code: 'EffectInDoubt' } });
    const raw = new Redis(SHARED_REDIS);
    try {
      // In the organism's own state key space, under a name that is not the call id.
      const key = `organism:{${group}}:state:effects:${effectNames(state, callId)[0]}`;
      expect(await raw.exists(`organism:kv:effects:${callId}`)).toBe(0);
      const ttl = await raw.ttl(key);
      expect(ttl).toBeGreaterThan(EFFECT_TTL_SECONDS - 60);
    } finally {
      raw.disconnect();
    }
  });

  it('with the memory transport, answers a repeat from the embedded store (the journal may deliver again after a crash)', async () => {
    const tool = sendTool();
    // The schema's defaults: bus.transport memory, durability on, the embedded kv store in a fresh data dir.
    const d = makeDispatcher([tool], [{ name: 'alice', tools: ['send_thing'] }]);
    const request = {
      tool: 'send_thing',
      args: { what: 'x' },
      listener: 'alice',
      thread: 't',
      callId: 'same',
    };
    const first = await d.call(request);
    const again = await d.call(request);
    expect(tool.sent).toEqual(['x']);
    expect(again).toEqual(first);
  });
});

describe('shared tool limits', () => {
  it('shares one rate-limit bucket per listener and tool across daemons', async () => {
    const group = newGroup();
    const noop = noopTool();
    const grants = [
      { name: 'alice', tools: ['noop'], tool_config: { noop: { rate_limit: { per_minute: 1, burst: 3 } } } },
    ];
    const one = makeDispatcher([noop], grants, { services: sharedServices(group).services });
    const two = makeDispatcher([noop], grants, { services: sharedServices(group).services });
    const call = (d: typeof one) => d.call({ tool: 'noop', args: {}, listener: 'alice', thread: 't' });
    const results = [await call(one), await call(two), await call(one), await call(two)];
    expect(results.map((r) => r.status)).toEqual(['ok', 'ok', 'ok', 'refused']);
    expect(results[3]).toMatchObject({ error: { code: 'RateLimited' } });
    expect(noop.runs).toHaveLength(3);
  });

  it('applies a revocation made for the organism on every daemon within seconds, and lifts it', async () => {
    const group = newGroup();
    const noop = noopTool();
    const grants = [{ name: 'alice', tools: ['noop'] }];
    const a = sharedServices(group);
    const one = makeDispatcher([noop], grants, { services: a.services });
    const two = makeDispatcher([noop], grants, { services: sharedServices(group).services });
    // A thread per call: the loop detector would refuse the same call repeated in one thread.
    const call = (d: typeof one) =>
      d.call({ tool: 'noop', args: {}, listener: 'alice', thread: randomUUID() });
    expect((await call(one)).status).toBe('ok');
    await revokeShared(a.services.config, 'noop', { reason: 'leaks data', time: new Date().toISOString() });
    for (const d of [one, two]) {
      const refused = await until(
        async () => {
          const r = await call(d);
          return r.status === 'refused' ? r : undefined;
        },
        'the revocation',
        REVOCATION_POLL_MS * 3,
      );
      expect(refused).toMatchObject({
        error: { code: 'ToolRevoked', message: 'tool noop is revoked: leaks data' },
      });
    }
    expect(await unrevokeShared(a.services.config, 'noop')).toBe(true);
    await until(
      async () => (await call(two)).status === 'ok',
      'the revocation to lift',
      REVOCATION_POLL_MS * 3,
    );
  });
});
