/**
 * Child process of bench/threads.ts: one bus holding `count` live threads, each with a message
 * waiting (queued for a paused listener) and a little history (its injection and the message
 * sent on), then, at that count: RSS and heap after GC, the latency of 1,000 more injections, and
 * the hop latency of one self-looping thread. Prints one JSON object. Args: count
 */
import pino from 'pino';
import { Bus } from '../src/bus/bus.ts';
import { MemoryTransport } from '../src/bus/transport/memory.ts';
import { defineListener } from '../src/listener/types.ts';
import { percentile } from './support.ts';
import { benchBusOptions, PING, pingerSpec } from './support-bus.ts';

const count = Number(process.argv[2] ?? '100000');
const INJECTS = 1_000;
const HOPS = 5_000;

const GREET = {
  tag: 'greet',
  schema: {
    type: 'object',
    properties: { text: { type: 'string' } },
    required: ['text'],
    additionalProperties: false,
  },
};
const greeter = defineListener<{ text: string }>({
  payload: GREET,
  handler: (p, ctx) => ctx.send('holder', `<hold><text>${p.text}</text></hold>`),
});
const holder = defineListener<{ text: string }>({ payload: { ...GREET, tag: 'hold' }, handler: () => {} });
const stamps: bigint[] = [];
let finishHops: (() => void) | undefined;
const pinger = defineListener<{ text: string; n: number }>({
  payload: PING,
  handler: (p, ctx) => {
    stamps.push(process.hrtime.bigint());
    if (p.n >= HOPS) return finishHops?.();
    return ctx.send('pinger', { text: p.text, n: p.n + 1 });
  },
});
const base = pingerSpec(pinger);
const spec = (name: string, tag: string, definition: typeof base.definition, peers: string[]) => ({
  tag,
  definition,
  config: { ...base.config, name, peers },
});

const bus = new Bus(
  [
    spec('greeter', 'greet', greeter, ['holder']),
    spec('holder', 'hold', holder, []),
    spec('pinger', 'ping', pinger, ['pinger']),
  ],
  new MemoryTransport(),
  {
    // Room for every waiting message: organism.yaml's bus.queue_length and history.max_threads
    // raised for an organism that keeps this many threads open.
    ...benchBusOptions({
      hops: HOPS,
      historyPerThread: 100,
      threadIdleMs: 3_600_000,
      queueLength: count + INJECTS + 1_000,
    }),
    historyMaxThreads: count + INJECTS + 1_000,
    logger: pino({ level: 'silent' }),
  },
);
bus.start();
bus.pause('holder');
const gc = (globalThis as { gc?: () => void }).gc;
gc?.();
const before = process.memoryUsage().rss;

for (let i = 0; i < count; i++) {
  await bus.inject({ to: 'greeter', payload: `<greet><text>thread ${i}</text></greet>` });
  // Injections arrive as over HTTP, not all before the first is handled: a loop of awaited
  // injects would otherwise queue all of them first, since the bus lets the event loop turn.
  if (i % 500 === 499) await greeterIdle();
}
await waitingReached(count);
gc?.();
const { rss, heapUsed, heapTotal } = process.memoryUsage();

// At that count: more injections (each a new thread, its greeting handled and its message queued).
const injects = new Float64Array(INJECTS);
for (let i = 0; i < INJECTS; i++) {
  const t0 = process.hrtime.bigint();
  await bus.inject({ to: 'greeter', payload: `<greet><text>late ${i}</text></greet>` });
  injects[i] = Number(process.hrtime.bigint() - t0) / 1_000;
}
await waitingReached(count + INJECTS);

// And one thread looping through the pipeline while all those wait.
await new Promise<void>((resolve) => {
  finishHops = resolve;
  void bus.inject({ to: 'pinger', payload: '<ping><text>Hello, Ada!</text><n>1</n></ping>' });
});
const hops = new Float64Array(stamps.length - 1);
for (let i = 1; i < stamps.length; i++) hops[i - 1] = Number(stamps[i]! - stamps[i - 1]!) / 1_000;
injects.sort();
hops.sort();
const mb = (bytes: number) => Math.round((bytes / 1048576) * 10) / 10;
const stats = bus.stats();
process.stdout.write(
  JSON.stringify({
    threads: stats.threads,
    waiting: bus.listenerState('holder')?.depth,
    rss_mb: mb(rss),
    rss_mb_before: mb(before),
    heap_used_mb: mb(heapUsed),
    heap_total_mb: mb(heapTotal),
    inject_us_p50: Math.round(percentile(injects, 50) * 10) / 10,
    inject_us_p99: Math.round(percentile(injects, 99) * 10) / 10,
    hop_us_p50: Math.round(percentile(hops, 50) * 10) / 10,
    hop_us_p99: Math.round(percentile(hops, 99) * 10) / 10,
  }),
);
process.exit(0);

async function greeterIdle(): Promise<void> {
  for (;;) {
    const state = bus.listenerState('greeter');
    if (!state || (state.depth === 0 && state.active === 0)) return;
    await new Promise((r) => setImmediate(r));
  }
}

async function waitingReached(n: number): Promise<void> {
  while ((bus.listenerState('holder')?.depth ?? 0) < n) await new Promise((r) => setTimeout(r, 5));
}
