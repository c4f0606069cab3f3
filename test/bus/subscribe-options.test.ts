/**
 * What the bus tells its transport about each listener it subscribes: an agent reads its threads'
 * histories, so a transport that loads thread state with each message (Redis) brings the history's
 * count along for it, and leaves that command out for every other listener.
 */
import pino from 'pino';
import { expect, it } from 'vitest';
import { Bus } from '../../src/bus/bus.ts';
import { MemoryTransport } from '../../src/bus/transport/memory.ts';
import type { SubscribeOptions } from '../../src/bus/transport/types.ts';
import { defineListener } from '../../src/listener/types.ts';
import { listenerSpec, TEST_BUS, TEST_LIMITS, textPayload } from '../helpers/bus.ts';

it("subscribes an agent as reading its threads' histories, and a handler as not", async () => {
  const transport = new MemoryTransport();
  const seen = new Map<string, SubscribeOptions | undefined>();
  const subscribe = transport.subscribe.bind(transport);
  transport.subscribe = (listener, deliver, options) => {
    seen.set(listener, options);
    return subscribe(listener, deliver, options);
  };
  const definition = defineListener<{ text: string }>({
    payload: textPayload('say'),
    handler: () => undefined,
  });
  const bus = new Bus(
    [
      listenerSpec({ name: 'agent', config: { agent: true }, definition }),
      listenerSpec({ name: 'plain', definition }),
    ],
    transport,
    { limits: TEST_LIMITS, bus: TEST_BUS, logger: pino({ level: 'silent' }) },
  );
  bus.start();
  try {
    expect(seen.get('agent')?.readsHistory).toBe(true);
    expect(seen.get('plain')?.readsHistory).toBe(false);
  } finally {
    await bus.stop(0);
  }
});
