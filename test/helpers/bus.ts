/** Builds a real Bus on the memory transport from listener definitions written inside a test. */
import pino from 'pino';
import { Bus, type ToolPort } from '../../src/bus/bus.ts';
import type { ListenerSpec } from '../../src/bus/listeners.ts';
import type { MessageView } from '../../src/bus/message.ts';
import { MemoryTransport } from '../../src/bus/transport/memory.ts';
import type { BusSection, LimitsSection, ListenerConfig } from '../../src/config/types.ts';
import type { ListenerDefinition } from '../../src/listener/types.ts';

export const TEST_LIMITS: LimitsSection = {
  max_message_bytes: 1_048_576,
  max_xml_depth: 64,
  max_attributes: 64,
  max_text_length: 1_048_576,
  max_thread_hops: 1000,
  max_call_depth: 100,
  handler_timeout_ms: 30_000,
  max_history_per_thread: 1000,
  thread_idle_ms: 600_000,
};

export const TEST_BUS: BusSection = {
  transport: 'memory',
  group: 'test',
  queue_length: 1000,
  max_concurrent: 16,
  drain_timeout_ms: 5_000,
  max_deliveries: 5,
  heartbeat_ms: 1_000,
};

export interface TestListener {
  name: string;
  definition: ListenerDefinition<any>;
  peers?: string[];
  broadcast?: boolean;
  config?: Partial<ListenerConfig>;
}

export function listenerSpec(l: TestListener): ListenerSpec {
  return {
    tag: l.config?.payload ?? l.definition.payload.tag,
    definition: l.definition,
    config: {
      name: l.name,
      description: l.definition.description ?? `${l.name} (test)`,
      agent: false,
      peers: l.peers ?? [],
      broadcast: l.broadcast ?? false,
      tools: [],
      tool_config: {},
      trust: 'medium',
      max_turns: 10,
      ...l.config,
    },
  };
}

export function startBus(
  listeners: TestListener[],
  overrides: { limits?: Partial<LimitsSection>; bus?: Partial<BusSection>; tools?: ToolPort } = {},
): Bus {
  const bus = new Bus(listeners.map(listenerSpec), new MemoryTransport(), {
    limits: { ...TEST_LIMITS, ...overrides.limits },
    bus: { ...TEST_BUS, ...overrides.bus },
    logger: pino({ level: 'silent' }),
    tools: overrides.tools,
  });
  bus.start();
  return bus;
}

/** Resolves with the thread's messages once nothing is in flight in it. */
export function settled(bus: Bus, thread: string, timeoutMs = 10_000): Promise<MessageView[]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      unwatch();
      reject(new Error(`thread ${thread} did not settle in ${timeoutMs} ms`));
    }, timeoutMs);
    const finish = () => {
      clearTimeout(timer);
      unwatch();
      resolve(bus.thread(thread)?.messages ?? []);
    };
    const unwatch = bus.watch(thread, { onMessage: () => {}, onIdle: finish });
    if (bus.thread(thread)?.status !== 'active') finish();
  });
}

/** Schema for `<tag><text>...</text></tag>`-style test payloads. */
export function textPayload(tag: string) {
  return {
    tag,
    schema: {
      type: 'object',
      properties: { text: { type: 'string' } },
      required: ['text'],
      additionalProperties: false,
    },
  };
}
