/**
 * Child process of bench/redis.ts: one "daemon" — a Bus on the Redis Streams transport with the
 * shared thread store — whose one listener sends each ping back to itself. Two of these share one
 * consumer group, so every hop may be handled by either process. At `startAt` (epoch ms) it
 * injects its threads; it counts handler calls between `startAt + warmMs` and `+ seconds`, prints
 * `{"calls": n, "seconds": s, "cpuUs": µs of CPU this process used meanwhile}` and stops.
 * Args: url group threads startAt warmMs seconds
 */
import pino from 'pino';
import { Bus } from '../src/bus/bus.ts';
import { createBusBackend } from '../src/bus/redis/backend.ts';
import { defineListener } from '../src/listener/types.ts';
import { PING, pingerSpec } from './support-bus.ts';

const [url = '', group = '', threadsArg = '8', startArg = '0', warmArg = '1000', secondsArg = '3'] =
  process.argv.slice(2);
const threads = Number(threadsArg);
const startAt = Number(startArg);
const warmMs = Number(warmArg);
const seconds = Number(secondsArg);

let counting = false;
let calls = 0;
const definition = defineListener<{ text: string; n: number }>({
  payload: PING,
  handler: (p, ctx) => {
    if (counting) calls++;
    return ctx.send('pinger', { text: p.text, n: p.n + 1 });
  },
});

const limits = {
  max_message_bytes: 1_048_576,
  max_xml_depth: 64,
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
};
const logger = pino({ level: 'silent' });
const backend = createBusBackend({ bus: busSection, limits, listeners: [] }, logger);
const bus = new Bus([pingerSpec(definition)], backend.transport, {
  limits,
  bus: busSection,
  logger,
  threadStore: backend.threadStore,
});
bus.start();

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
process.stdout.write(JSON.stringify({ calls, seconds: elapsed, cpuUs: cpu.user + cpu.system }));
await bus.stop(0).catch(() => {});
await backend.close();
process.exit(0);

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}
