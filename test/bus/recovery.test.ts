/**
 * A journaled memory transport across a "crash" (the first bus is simply left behind, as kill -9
 * leaves it): the second bus, on the same journal folder, runs what was accepted and not handled,
 * in order within each thread; a reply finds its way back into frames rebuilt from the journal; a
 * re-run handler's outputs the journal already holds are not sent twice.
 */
import { hash } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { Bus } from '../../src/bus/bus.ts';
import { Journal } from '../../src/bus/journal/journal.ts';
import type { Message } from '../../src/bus/message.ts';
import { MemoryTransport } from '../../src/bus/transport/memory.ts';
import { defineListener } from '../../src/listener/types.ts';
import { until } from '../../src/testing/index.ts';
import { listenerSpec, TEST_BUS, TEST_LIMITS, type TestListener, textPayload } from '../helpers/bus.ts';

const buses: Bus[] = [];
afterEach(async () => {
  for (const bus of buses.splice(0)) await bus.stop(0).catch(() => {});
});

async function journaledBus(dir: string, listeners: TestListener[]): Promise<Bus> {
  const journal = await Journal.open({ dir, fsync: 'batch' });
  const bus = new Bus(listeners.map(listenerSpec), new MemoryTransport({ journal }), {
    limits: TEST_LIMITS,
    bus: { ...TEST_BUS, queue_length: 10 },
    logger: pino({ level: 'silent' }),
  });
  bus.start();
  buses.push(bus);
  return bus;
}

const never = () => new Promise<void>(() => {});
describe('journaled memory transport: recovery', () => {
  it('runs every accepted, unhandled message after a crash, once, in order within each thread', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'organism-recovery-'));
    const stuck = defineListener<{ text: string }>({ payload: textPayload('job'), handler: never });
    const first = await journaledBus(dir, [
      { name: 'worker', definition: stuck, config: { max_concurrent: 2 } },
    ]);
    const threads: string[] = [];
    // 40 messages in 4 threads: more than the queue's length (10) is accepted across the crash.
    for (let t = 0; t < 4; t++) {
      const { thread } = await first.inject({ to: 'worker', payload: `<job><text>${t}:0</text></job>` });
      threads.push(thread);
      for (let i = 1; i < 3; i++)
        await first.inject({ to: 'worker', thread, payload: `<job><text>${t}:${i}</text></job>` });
    }

    const seen: string[] = [];
    const worker = defineListener<{ text: string }>({
      payload: textPayload('job'),
      handler: (p) => {
        seen.push(p.text);
      },
    });
    const second = await journaledBus(dir, [
      { name: 'worker', definition: worker, config: { max_concurrent: 2 } },
    ]);
    expect(second.recover()).toMatchObject({ recovered: 12, dropped: 0, threads: 4 });
    // (The second bus has a history of its own, empty: the threads are known to its registry only.)
    await until(() => seen.length >= 12 && second.stats().inFlight === 0);
    expect([...seen].sort()).toEqual(threads.flatMap((_, t) => [0, 1, 2].map((i) => `${t}:${i}`)).sort());
    for (let t = 0; t < 4; t++)
      expect(seen.filter((s) => s.startsWith(`${t}:`))).toEqual([`${t}:0`, `${t}:1`, `${t}:2`]);
    await second.stop();

    // Handled now: a third start has nothing left to run.
    const third = await journaledBus(dir, [{ name: 'worker', definition: worker }]);
    expect(third.recover().recovered).toBe(0);
    expect(seen).toHaveLength(12);
  });

  it('delivers a reply into frames rebuilt from the journal', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'organism-recovery-'));
    const asker = (replies: string[]): TestListener => ({
      name: 'asker',
      peers: ['answerer'],
      definition: defineListener<{ text: string }>({
        payload: textPayload('ask'),
        handler: (p, ctx) => ctx.send('answerer', { text: p.text }),
        onReply: (reply) => {
          replies.push(String(reply.payload.text));
        },
      }),
    });
    const answerer = (handler: (p: { text: string }) => unknown): TestListener => ({
      name: 'answerer',
      definition: defineListener<{ text: string }>({
        payload: textPayload('question'),
        handler: handler as never,
        response: textPayload('answer'),
      }),
    });
    const first = await journaledBus(dir, [asker([]), answerer(never)]);
    await first.inject({ to: 'asker', payload: '<ask><text>why</text></ask>' });
    await until(() => first.stats().queues.answerer?.active === 1);

    const replies: string[] = [];
    const second = await journaledBus(dir, [
      asker(replies),
      answerer((p) => ({ kind: 'respond', payload: { text: `because ${p.text}` } })),
    ]);
    expect(second.recover().recovered).toBe(1);
    await until(() => replies.length > 0 && second.stats().inFlight === 0);
    expect(replies).toEqual(['because why']);
  });

  it('does not send again an output the journal already holds from the cut-off run', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'organism-recovery-'));
    // The journal as a crash leaves it: the input accepted, its first output accepted and handled,
    // the input's own handled mark never written.
    const journal = await Journal.open({ dir });
    const input: Message = {
      id: 'input-1',
      thread: 'th-1',
      frame: 'fr-1',
      from: 'api',
      to: 'relay',
      tag: 'job',
      envelope:
        '<message xmlns="https://xml-pipeline.org/ns/envelope/v1"><meta><from>api</from><to>relay</to><thread>th-1</thread></meta><job><text>x</text></job></message>',
      kind: 'message',
      hop: 1,
      time: Date.now(),
    };
    const outputId = hash('sha256', 'input-1\u00001', 'base64url').slice(0, 22);
    journal.accept(input, [['fr-1', 'relay', 'api', null, 0]], undefined);
    const segment = journal.accept(
      { ...input, id: outputId, frame: 'fr-2', from: 'relay', to: 'sink' },
      [['fr-2', 'sink', 'relay', null, 1]],
      undefined,
    );
    await journal.durable();
    journal.handled(outputId, segment);
    await journal.durable();
    await journal.close();

    const sunk: string[] = [];
    const second = await journaledBus(dir, [
      {
        name: 'relay',
        peers: ['sink'],
        definition: defineListener<{ text: string }>({
          payload: textPayload('job'),
          handler: (p, ctx) => [
            ctx.send('sink', { text: `${p.text}-1` }),
            ctx.send('sink', { text: `${p.text}-2` }),
          ],
        }),
      },
      {
        name: 'sink',
        definition: defineListener<{ text: string }>({
          payload: textPayload('job2'),
          handler: (p) => {
            sunk.push(p.text);
          },
        }),
        config: { payload: 'job' },
      },
    ]);
    expect(second.recover().recovered).toBe(1);
    await until(() => second.stats().inFlight === 0);
    // The first output was made and handled before the crash; only the second is new.
    expect(sunk).toEqual(['x-2']);
  });
});
