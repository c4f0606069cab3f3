/** The in-memory transport against the shared Transport contract. */
import { describe, expect, it } from 'vitest';
import type { Message } from '../../src/bus/message.ts';
import { MemoryTransport } from '../../src/bus/transport/memory.ts';
import { transportContract } from './transport.contract.ts';

transportContract('memory', {
  fresh: async () => new MemoryTransport(),
  capabilities: { boundedInFlight: false, redelivery: false },
});

describe('memory transport without a journal', () => {
  const message = (to: string, id: string): Message => ({
    id,
    thread: 't',
    frame: 'f',
    from: 'a',
    to,
    tag: 'ping',
    envelope: '<x/>',
    kind: 'message',
    hop: 1,
    time: Date.now(),
  });

  it('hands a message to the detached hand-over when the subscriber gives one, in order, and makes no promise for it', async () => {
    const transport = new MemoryTransport();
    const detached: string[] = [];
    let promised = 0;
    transport.subscribe(
      'b',
      () => {
        promised++;
        return Promise.resolve();
      },
      { deliverDetached: (m) => detached.push(m.id) },
    );
    await transport.publish(message('b', '1'));
    await transport.publish(message('b', '2'));
    expect(detached).toEqual(['1', '2']);
    expect(promised).toBe(0);
    await transport.close();
  });
});
