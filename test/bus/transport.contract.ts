/**
 * The one case file every Transport runs (memory-transport.test.ts, redis-transport.test.ts). A
 * transport passes when it behaves like the others here. Transports that fetch work from a
 * durable log (Redis) also promise more: a bound on deliveries in flight, acknowledgement only
 * after delivery, and redelivery of unacknowledged work; those cases run where the harness says
 * the transport has the capability, and the in-memory transport says it does not.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Message } from '../../src/bus/message.ts';
import type { Deliver, Transport } from '../../src/bus/transport/types.ts';
import { TransportError } from '../../src/errors.ts';
import { until } from '../../src/testing/index.ts';

export interface TransportHarness {
  /** A transport over fresh, empty state. */
  fresh(): Promise<Transport>;
  /**
   * Durable transports only: another transport (another daemon) over the same state as `of`.
   * `consumer` names it; the same name as a dead transport's means "that daemon restarted".
   */
  peer?(of: Transport, options?: { consumer?: string; maxDeliveries?: number }): Promise<Transport>;
  /** Durable transports only: messages for `listener` delivered but not yet acknowledged. */
  unacked?(of: Transport, listener: string): Promise<number>;
  /** Durable transports only: closes `t` as a crash would, leaving its in-flight work unacknowledged. */
  crash?(t: Transport): Promise<void>;
  /** Durable transports only: messages moved to the dead-letter store, newest first. */
  deadLetters?(of: Transport): Promise<Array<{ listener: string; messageId?: string; reason: string }>>;
  capabilities: {
    /** Fetches at most SubscribeOptions.maxInFlight deliveries at once. */
    boundedInFlight: boolean;
    /** Keeps unacknowledged work and redelivers it (to this or another instance). */
    redelivery: boolean;
    /**
     * Keeps publish order within each thread only, not across threads (the Redis transport with
     * bus.partitions: each thread's messages go to its own partition's stream).
     */
    orderPerThread?: boolean;
  };
}

let counter = 0;

export function testMessage(to: string, n: number, extra: Partial<Message> = {}): Message {
  counter++;
  return {
    id: `m-${process.pid}-${counter}-${n}`,
    thread: `t-${n % 3}`,
    frame: `f-${n}`,
    from: 'sender',
    to,
    tag: 'ping',
    envelope: `<message xmlns="https://xml-pipeline.org/ns/envelope/v1"><meta><from>sender</from><to>${to}</to><thread>t-${n % 3}</thread></meta><ping><n>${n}</n></ping></message>`,
    kind: 'message',
    hop: n,
    time: 1_700_000_000_000 + n,
    ...extra,
  };
}

/** Messages by thread, each thread's in the order given. */
function byThread(messages: readonly Message[]): Record<string, Message[]> {
  const out: Record<string, Message[]> = {};
  for (const m of messages) {
    const list = out[m.thread] ?? [];
    list.push(m);
    out[m.thread] = list;
  }
  return out;
}

/** What `fn` threw (a test failure when it threw nothing). */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

/** Every transport fails the same way for the same cause: a TransportError with this code. */
function coded(code: string) {
  return expect.objectContaining({ name: 'TransportError', code });
}

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/** `name`: the transport's own; `title` tells runs of one transport with different setups apart. */
export function transportContract(name: string, harness: TransportHarness, title = name): void {
  /** Hops of messages of several threads: in publish order, or sorted where only each thread's is kept. */
  const ordered = (hops: number[]): number[] =>
    harness.capabilities.orderPerThread ? [...hops].sort((a, b) => a - b) : hops;
  describe(`Transport contract: ${title}`, () => {
    const open: Transport[] = [];
    const fresh = async () => {
      const t = await harness.fresh();
      open.push(t);
      return t;
    };
    const peer = async (of: Transport, options?: { consumer?: string; maxDeliveries?: number }) => {
      const t = await harness.peer!(of, options);
      open.push(t);
      return t;
    };
    afterEach(async () => {
      await Promise.all(open.splice(0).map((t) => t.close().catch(() => {})));
    });

    it('says its name', async () => {
      const t = await fresh();
      expect(t.name).toBe(name);
    });

    it('delivers every message to its listener, in publish order, with every field intact', async () => {
      const t = await fresh();
      const got: Message[] = [];
      t.subscribe('a', async (m) => {
        got.push(m);
      });
      const sent = Array.from({ length: 40 }, (_, i) => testMessage('a', i));
      for (const m of sent) await t.publish(m);
      await until(() => got.length === sent.length, 'all deliveries');
      if (harness.capabilities.orderPerThread) expect(byThread(got)).toEqual(byThread(sent));
      else expect(got).toEqual(sent);
    });

    it('keeps listeners apart: each subscriber gets only messages addressed to it', async () => {
      const t = await fresh();
      const got: Record<string, number[]> = { a: [], b: [] };
      t.subscribe('a', async (m) => {
        got.a!.push(m.hop);
      });
      t.subscribe('b', async (m) => {
        got.b!.push(m.hop);
      });
      for (let i = 0; i < 10; i++) await t.publish(testMessage(i % 2 === 0 ? 'a' : 'b', i));
      await until(() => got.a!.length + got.b!.length === 10, 'deliveries');
      if (harness.capabilities.orderPerThread) {
        got.a!.sort((x, y) => x - y);
        got.b!.sort((x, y) => x - y);
      }
      expect(got).toEqual({ a: [0, 2, 4, 6, 8], b: [1, 3, 5, 7, 9] });
    });

    it('refuses a second subscriber for the same listener', async () => {
      const t = await fresh();
      t.subscribe('a', async () => {});
      const error = thrown(() => t.subscribe('a', async () => {}));
      expect(error).toBeInstanceOf(TransportError);
      expect(error).toEqual(coded('transport.duplicate_subscriber'));
      expect((error as Error).message).toMatch(/a already has a subscriber/);
    });

    it('keeps delivering after a delivery rejects or throws', async () => {
      const t = await fresh();
      const got: number[] = [];
      t.subscribe('a', async (m) => {
        got.push(m.hop);
        if (m.hop === 1) throw new Error('handler blew up');
      });
      for (let i = 0; i < 4; i++) await t.publish(testMessage('a', i));
      await until(() => got.filter((n) => n !== 1).length === 3, 'the other deliveries');
      expect(ordered(got.filter((n) => n !== 1))).toEqual([0, 2, 3]);
    });

    it('unsubscribe lets an in-flight delivery finish, then delivers nothing more', async () => {
      const t = await fresh();
      const g = gate();
      const started: number[] = [];
      const finished: number[] = [];
      const sub = t.subscribe('a', async (m) => {
        started.push(m.hop);
        await g.promise;
        finished.push(m.hop);
      });
      await t.publish(testMessage('a', 1));
      await until(() => started.length === 1, 'the first delivery');
      let unsubscribed = false;
      const done = sub.unsubscribe().then(() => {
        unsubscribed = true;
      });
      await new Promise((r) => setTimeout(r, 50));
      g.open();
      await done;
      expect(unsubscribed).toBe(true);
      expect(finished).toEqual([1]);
      await t.publish(testMessage('a', 2)).catch(() => {});
      await new Promise((r) => setTimeout(r, 300));
      expect(started).toEqual([1]);
    });

    it('accepts a new subscriber for a listener after the old one unsubscribed', async () => {
      const t = await fresh();
      const first: number[] = [];
      const second: number[] = [];
      const sub = t.subscribe('a', async (m) => {
        first.push(m.hop);
      });
      await t.publish(testMessage('a', 1));
      await until(() => first.length === 1, 'the first delivery');
      await sub.unsubscribe();
      t.subscribe('a', async (m) => {
        second.push(m.hop);
      });
      await t.publish(testMessage('a', 2));
      await until(() => second.length === 1, 'the second subscriber');
      expect(first).toEqual([1]);
      expect(second).toEqual([2]);
    });

    it('refuses publish and subscribe after close, and close is idempotent', async () => {
      const t = await fresh();
      t.subscribe('a', async () => {});
      await t.close();
      await t.close();
      const publishing = t.publish(testMessage('a', 1));
      await expect(publishing).rejects.toBeInstanceOf(TransportError);
      await expect(publishing).rejects.toEqual(coded('transport.closed'));
      const subscribing = thrown(() => t.subscribe('b', async () => {}));
      expect(subscribing).toBeInstanceOf(TransportError);
      expect(subscribing).toEqual(coded('transport.closed'));
    });

    it('lets a delivery say it is handled before it settles: the rest flow on meanwhile, each delivered once', async () => {
      const t = await fresh();
      const g = gate();
      const got: number[] = [];
      t.subscribe(
        'a',
        async (m, handled) => {
          got.push(m.hop);
          // The handler is done; only its outputs' confirmation (held by the gate for the first) is left.
          handled?.();
          if (m.hop === 0) await g.promise;
        },
        // One slot: a transport that counts slots must free it on handled() for the rest to come.
        { maxInFlight: 1 },
      );
      for (let i = 0; i < 4; i++) await t.publish(testMessage('a', i));
      await until(() => got.length === 4, 'the deliveries after the handled one');
      g.open();
      await new Promise((r) => setTimeout(r, 300));
      expect(ordered(got)).toEqual([0, 1, 2, 3]);
    });

    if (harness.capabilities.boundedInFlight) {
      it('hands out no more than maxInFlight deliveries at once', async () => {
        const t = await fresh();
        const g = gate();
        let running = 0;
        let most = 0;
        let done = 0;
        t.subscribe(
          'a',
          async () => {
            running++;
            most = Math.max(most, running);
            await g.promise;
            running--;
            done++;
          },
          { maxInFlight: 3 },
        );
        for (let i = 0; i < 12; i++) await t.publish(testMessage('a', i));
        await until(() => running === 3, 'three deliveries in flight');
        await new Promise((r) => setTimeout(r, 300));
        expect(running).toBe(3);
        g.open();
        await until(() => done === 12, 'all deliveries');
        expect(most).toBe(3);
      });
    }

    if (harness.capabilities.redelivery) {
      describe('durable delivery', () => {
        it('acknowledges a message only once its delivery has resolved', async () => {
          const t = await fresh();
          const g = gate();
          let delivered = 0;
          t.subscribe('a', async () => {
            delivered++;
            await g.promise;
          });
          await t.publish(testMessage('a', 1));
          await until(() => delivered === 1, 'the delivery');
          expect(await harness.unacked!(t, 'a')).toBe(1);
          g.open();
          await until(async () => (await harness.unacked!(t, 'a')) === 0, 'the ack');
        });

        it('acknowledges a delivery that said handled and then failed: its handler had finished, nothing is redelivered', async () => {
          const t = await fresh();
          let calls = 0;
          t.subscribe('a', async (_m, handled) => {
            calls++;
            expect(handled).toBeTypeOf('function');
            handled!();
            throw new Error('an output could not be confirmed');
          });
          await t.publish(testMessage('a', 1));
          await until(async () => calls === 1 && (await harness.unacked!(t, 'a')) === 0, 'the ack');
          await new Promise((r) => setTimeout(r, 800));
          expect(calls).toBe(1);
          expect(await harness.deadLetters!(t)).toEqual([]);
        });

        it('keeps messages published before anyone subscribed', async () => {
          const t = await fresh();
          for (let i = 0; i < 3; i++) await t.publish(testMessage('late', i));
          const got: number[] = [];
          t.subscribe('late', async (m) => {
            got.push(m.hop);
          });
          await until(() => got.length === 3, 'the early messages');
          expect(ordered(got)).toEqual([0, 1, 2]);
        });

        it('redelivers unacknowledged work of a crashed instance to another one', async () => {
          const a = await fresh();
          const started: string[] = [];
          a.subscribe('a', async (m) => {
            started.push(m.id);
            await new Promise(() => {}); // never settles: the daemon "dies" mid-handler
          });
          const m = testMessage('a', 7);
          await a.publish(m);
          await until(() => started.length === 1, 'the first delivery');
          await harness.crash!(a);
          const b = await peer(a, { consumer: 'survivor' });
          const got: Message[] = [];
          b.subscribe('a', async (x) => {
            got.push(x);
          });
          await until(() => got.length === 1, 'the redelivery');
          expect(got[0]).toEqual(m);
          await until(async () => (await harness.unacked!(b, 'a')) === 0, 'the ack by the survivor');
        });

        it('re-reads its own pending work first when an instance restarts under the same name', async () => {
          const a = await fresh();
          let first = 0;
          a.subscribe('a', async () => {
            first++;
            await new Promise(() => {});
          });
          const m = testMessage('a', 3);
          await a.publish(m);
          await until(() => first === 1, 'the first delivery');
          await harness.crash!(a);
          // A peer without a name reuses the dead instance's consumer name: the same daemon, restarted.
          const again = await peer(a);
          const got: Message[] = [];
          again.subscribe('a', async (x) => {
            got.push(x);
          });
          await until(() => got.length === 1, 'the pending message');
          expect(got[0]!.id).toBe(m.id);
        });

        it('does not redeliver acknowledged work', async () => {
          const a = await fresh();
          const got: number[] = [];
          a.subscribe('a', async (m) => {
            got.push(m.hop);
          });
          for (let i = 0; i < 3; i++) await a.publish(testMessage('a', i));
          await until(async () => got.length === 3 && (await harness.unacked!(a, 'a')) === 0, 'acks');
          await a.close();
          const b = await peer(a);
          const again: number[] = [];
          b.subscribe('a', async (m) => {
            again.push(m.hop);
          });
          await new Promise((r) => setTimeout(r, 800));
          expect(again).toEqual([]);
        });

        it('retries a failing delivery, dead-letters it after maxDeliveries, and the rest flows on', async () => {
          const t = await fresh();
          const poison = testMessage('a', 666);
          const attempts: string[] = [];
          const good: number[] = [];
          t.subscribe('a', async (m) => {
            if (m.id === poison.id) {
              attempts.push(m.id);
              throw new Error('this message always fails');
            }
            good.push(m.hop);
          });
          await t.publish(testMessage('a', 1));
          await t.publish(poison);
          await t.publish(testMessage('a', 2));
          await until(async () => (await harness.deadLetters!(t)).length === 1, {
            what: 'the dead letter',
            timeoutMs: 15_000,
          });
          const [letter] = await harness.deadLetters!(t);
          expect(letter).toMatchObject({ listener: 'a', messageId: poison.id });
          expect(letter!.reason).toMatch(/delivered 3 times/);
          expect(letter!.reason).toMatch(/this message always fails/);
          expect(attempts).toHaveLength(3);
          expect(ordered(good)).toEqual([1, 2]);
          expect(await harness.unacked!(t, 'a')).toBe(0);
          // And the listener still works.
          await t.publish(testMessage('a', 3));
          await until(() => good.length === 3, 'a later message');
        });

        it('flushes a publish in progress when closed: the message reaches another instance', async () => {
          const a = await fresh();
          const m = testMessage('a', 9);
          const publishing = a.publish(m);
          await a.close();
          await publishing;
          const b = await peer(a);
          const got: string[] = [];
          b.subscribe('a', async (x) => {
            got.push(x.id);
          });
          await until(() => got.length === 1, 'the flushed message');
          expect(got).toEqual([m.id]);
        });
      });
    }
  });
}

export type { Deliver };
