/** Builds a real Bus on the memory transport from listener definitions written inside a test. */
import pino from 'pino';
import { Bus, type ToolPort } from '../../src/bus/bus.ts';
import type { ListenerSpec } from '../../src/bus/listeners.ts';
import { MemoryTransport } from '../../src/bus/transport/memory.ts';
import type { BusSection, LimitsSection, ListenerConfig } from '../../src/config/types.ts';
import type { ListenerDefinition } from '../../src/listener/types.ts';
import { testConfig } from '../../src/testing/index.ts';

/** The schema's defaults (src/testing's testConfig), with a shorter drain so a test's stop is quick. */
const DEFAULTS = testConfig({ bus: { drain_timeout_ms: 5_000 } });
export const TEST_LIMITS: LimitsSection = DEFAULTS.limits;
export const TEST_BUS: BusSection = DEFAULTS.bus;

export interface TestListener {
  name: string;
  definition: ListenerDefinition<any>;
  peers?: string[];
  broadcast?: boolean;
  config?: Partial<ListenerConfig>;
}

/** The listener as organism.yaml would give it: its entry with the schema's defaults applied. */
export function listenerSpec(l: TestListener): ListenerSpec {
  const [config] = testConfig({
    listeners: [
      {
        description: l.definition.description ?? `${l.name} (test)`,
        ...l.config,
        name: l.name,
        peers: l.peers ?? [],
        broadcast: l.broadcast ?? false,
      },
    ],
  }).listeners;
  return { tag: l.config?.payload ?? l.definition.payload.tag, definition: l.definition, config: config! };
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
export { settled } from '../../src/testing/listener.ts';

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
