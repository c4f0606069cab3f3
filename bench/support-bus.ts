/** A bus whose one listener sends each payload back to itself: each handler call is one hop. */
import pino from 'pino';
import { Bus, type BusOptions } from '../src/bus/bus.ts';
import type { ListenerSpec } from '../src/bus/listeners.ts';
import { MemoryTransport } from '../src/bus/transport/memory.ts';
import { defineListener, type ListenerDefinition } from '../src/listener/types.ts';

/** The payload every bus bench sends: `<ping><text/><n/></ping>`. */
export const PING = {
  tag: 'ping',
  schema: {
    type: 'object',
    properties: { text: { type: 'string' }, n: { type: 'integer' } },
    required: ['text', 'n'],
    additionalProperties: false,
  },
};

/** The one listener of the bus benches: `pinger`, which may send to itself. */
export function pingerSpec(definition: ListenerDefinition<any>): ListenerSpec {
  return {
    tag: 'ping',
    definition,
    config: {
      name: 'pinger',
      description: 'bench',
      agent: false,
      peers: ['pinger'],
      broadcast: false,
      tools: [],
      tool_config: {},
      trust: 'medium',
      max_turns: 10,
      mcp: false,
    },
  };
}

/**
 * The limits and bus settings of a bench bus on the memory transport: organism.yaml's defaults,
 * with room for `hops` hops a thread and the history, idle time and queue the bench asks for.
 */
export function benchBusOptions(o: {
  hops: number;
  historyPerThread: number;
  threadIdleMs: number;
  queueLength: number;
}): Pick<BusOptions, 'limits' | 'bus'> {
  return {
    limits: {
      max_message_bytes: 1_048_576,
      max_xml_depth: 64,
      max_xml_elements: 10_000,
      max_attributes: 64,
      max_text_length: 1_048_576,
      max_thread_hops: o.hops + 10,
      max_call_depth: o.hops + 10,
      handler_timeout_ms: 30_000,
      max_history_per_thread: o.historyPerThread,
      thread_idle_ms: o.threadIdleMs,
    },
    bus: {
      transport: 'memory',
      group: 'bench',
      queue_length: o.queueLength,
      max_concurrent: 16,
      drain_timeout_ms: 1_000,
      max_deliveries: 5,
      heartbeat_ms: 1_000,
      partitions: 1,
    },
  };
}

export interface SelfLoop {
  /** Starts `threads` threads and resolves when each has made its hops; returns total handler calls. */
  run(threads: number): Promise<number>;
  stop(): Promise<void>;
  /** hrtime of each handler call, when recording was asked for. */
  stamps: bigint[];
}

export async function selfLoopBus(
  hopsPerThread: number,
  record = false,
  historyPerThread = 100,
  /** More bus options (the telemetry bench passes `tracing`). */
  extra: Partial<BusOptions> = {},
): Promise<SelfLoop> {
  const stamps: bigint[] = [];
  let calls = 0;
  const finished = new Map<string, () => void>();
  const definition = defineListener<{ text: string; n: number }>({
    payload: PING,
    handler: (p, ctx) => {
      calls++;
      if (record) stamps.push(process.hrtime.bigint());
      if (p.n >= hopsPerThread) {
        finished.get(ctx.thread)?.();
        return;
      }
      return ctx.send('pinger', { text: p.text, n: p.n + 1 });
    },
  });
  const bus = new Bus([pingerSpec(definition)], new MemoryTransport(), {
    ...benchBusOptions({ hops: hopsPerThread, historyPerThread, threadIdleMs: 600_000, queueLength: 1_000 }),
    logger: pino({ level: 'silent' }),
    ...extra,
  });
  bus.start();
  return {
    stamps,
    async run(threads) {
      const before = calls;
      await Promise.all(
        Array.from({ length: threads }, async () => {
          const { thread } = await bus.inject({
            to: 'pinger',
            payload: '<ping><text>Hello, Ada!</text><n>1</n></ping>',
          });
          await new Promise<void>((resolve) => {
            if (bus.thread(thread)?.status !== 'active') return resolve();
            finished.set(thread, resolve);
          });
        }),
      );
      return calls - before;
    },
    async stop() {
      await bus.stop(1_000);
    },
  };
}
