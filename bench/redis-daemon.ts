/**
 * Child process of bench/redis.ts: one "daemon" — a Bus on the Redis Streams transport with the
 * shared thread store. Two of these share one consumer group, so every hop may be handled by
 * either process. At `startAt` (epoch ms) it injects its threads; it counts handler calls between
 * `startAt + warmMs` and `+ seconds`, prints `{"calls": n, "seconds": s, "cpuUs": µs of CPU this
 * process used meanwhile, "refused": replies that were not answers}` and stops.
 * - mode `ping`: one listener sends each ping back to itself (a send nobody answers).
 * - mode `call`: `pinger` (with onReply) calls `echo`, which answers; each answer makes the next
 *   call. Both handler calls count.
 * - optimize_for (default speed): the V8 flags it runs with are a daemon's with that
 *   organism.optimize_for, set in the same steps (bin/organism.js, then src/daemon.ts: the
 *   target's, then the running daemon's tier-up once the bus has started).
 * Args: url group threads startAt warmMs seconds [mode] [partitions] [optimize_for]
 */
import pino from 'pino';
import { Bus } from '../src/bus/bus.ts';
import type { ListenerSpec } from '../src/bus/listeners.ts';
import { createBusBackend } from '../src/bus/transport/factory.ts';
import { applyRunningV8Flags, applyV8Flags } from '../src/daemon/v8-flags.ts';
import { defineListener } from '../src/listener/types.ts';
import { PING, pingerSpec } from './support-bus.ts';

const [
  url = '',
  group = '',
  threadsArg = '8',
  startArg = '0',
  warmArg = '1000',
  secondsArg = '3',
  mode = 'ping',
  partitionsArg = '1',
  optimizeFor = 'speed',
] = process.argv.slice(2);
applyV8Flags('memory');
if (optimizeFor === 'speed') applyV8Flags('speed');
const threads = Number(threadsArg);
const startAt = Number(startArg);
const warmMs = Number(warmArg);
const seconds = Number(secondsArg);

let counting = false;
let calls = 0;
let refused = 0;
/** ping: sends each ping back to itself; nothing answers (its frames travel in the messages). */
const pinger = defineListener<{ text: string; n: number }>({
  payload: PING,
  handler: (p, ctx) => {
    if (counting) calls++;
    return ctx.send('pinger', { text: p.text, n: p.n + 1 });
  },
});
/** call: calls echo, and calls again on every answer (its frame and echo's live in Redis). */
const caller = defineListener<{ text: string; n: number }>({
  payload: PING,
  handler: (p, ctx) => {
    if (counting) calls++;
    return ctx.send('echo', { text: p.text, n: p.n });
  },
  onReply: (reply, ctx) => {
    if (reply.kind !== 'response') refused++;
    if (counting) calls++;
    return ctx.send('echo', { text: 'again', n: 1 });
  },
});
const echo = defineListener<{ text: string; n: number }>({
  payload: { ...PING, tag: 'echo' },
  handler: (p, ctx) => {
    if (counting) calls++;
    return ctx.respond(`<echoed><text>${p.text}</text></echoed>`);
  },
});
const specs =
  mode === 'call'
    ? [
        withConfig(pingerSpec(caller), { peers: ['echo'] }),
        withConfig(pingerSpec(echo), { name: 'echo', peers: [] }, 'echo'),
      ]
    : [pingerSpec(pinger)];

const limits = {
  max_message_bytes: 1_048_576,
  max_xml_depth: 64,
  max_xml_elements: 10_000,
  max_attributes: 64,
  max_text_length: 1_048_576,
  max_thread_hops: 1_000_000_000,
  max_call_depth: 1_000_000_000,
  handler_timeout_ms: 30_000,
  max_history_per_thread: 100,
  thread_idle_ms: 600_000,
};
const busSection = {
  transport: 'redis' as const,
  url,
  group,
  queue_length: 1_000,
  max_concurrent: 16,
  drain_timeout_ms: 1_000,
  max_deliveries: 5,
  heartbeat_ms: 1_000,
  partitions: Number(partitionsArg),
};
const logger = pino({ level: 'silent' });
const backend = await createBusBackend({ bus: busSection, limits, listeners: [] }, logger);
const bus = new Bus(specs, backend.transport, {
  limits,
  bus: busSection,
  logger,
  threadStore: backend.threadStore,
});
bus.start();
// As a daemon does once it runs (src/daemon.ts): V8's own tier-up for what runs from here on.
applyRunningV8Flags();

await sleep(startAt - Date.now());
for (let i = 0; i < threads; i++) {
  await bus.inject({ to: 'pinger', payload: '<ping><text>Hello, Ada!</text><n>1</n></ping>' });
}
await sleep(warmMs);
counting = true;
const t0 = process.hrtime.bigint();
const cpu0 = process.cpuUsage();
await sleep(seconds * 1000);
counting = false;
const cpu = process.cpuUsage(cpu0);
const elapsed = Number(process.hrtime.bigint() - t0) / 1e9;
// CPU time of this process in the window (user + system, µs): cost per message, less noisy than a rate.
process.stdout.write(JSON.stringify({ calls, seconds: elapsed, cpuUs: cpu.user + cpu.system, refused }));
await bus.stop(0).catch(() => {});
await backend.close();
process.exit(0);

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

/** The bench listener spec with its config changed (and its tag, for a listener of its own). */
function withConfig(
  spec: ListenerSpec,
  config: Partial<ListenerSpec['config']>,
  tag = spec.tag,
): ListenerSpec {
  return { ...spec, tag, config: { ...spec.config, ...config } };
}
