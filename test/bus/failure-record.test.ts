/**
 * Why a handler failed is recorded in the thread for operators (a `failure` record: error class,
 * message redacted, top frame of the listener's module), while its caller still gets only the
 * generic `<SystemError>`. On the in-process bus and on Redis, where another daemon reads the
 * thread's shared history.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { knownSecrets } from '../../src/audit/redact.ts';
import { Bus } from '../../src/bus/bus.ts';
import { topFrame } from '../../src/bus/failure.ts';
import type { MessageView } from '../../src/bus/message.ts';
import { type BusBackend, createBusBackend } from '../../src/bus/transport/factory.ts';
import { defineListener, type IncomingReply } from '../../src/listener/types.ts';
import { until } from '../../src/testing/index.ts';
import { dropGroup, SHARED_REDIS } from '../e2e/redis-support/harness.ts';
import {
  listenerSpec,
  settled,
  startBus,
  TEST_BUS,
  TEST_LIMITS,
  type TestListener,
  textPayload,
} from '../helpers/bus.ts';

const THIS_FILE = fileURLToPath(import.meta.url);
const SECRET = 'fr-Secret-9Qw7Zx3Vb5Nm';
/** The line of the `throw` below, as the record must name it. */
const THROW_LINE =
  readFileSync(THIS_FILE, 'utf8')
    .split('\n')
    .findIndex((line) => line.trimStart().startsWith('if (p.text')) + 1;

function thrower(): TestListener {
  return {
    name: 'thrower',
    // Its "module" is this file: the record names the frame in it.
    config: { handler: THIS_FILE },
    definition: defineListener<{ text: string }>({
      payload: textPayload('boom'),
      handler: (p) => {
        if (p.text === 'go') throw new TypeError(`cannot read the ledger (key ${SECRET})`);
        return undefined;
      },
    }),
  };
}

function hanger(): TestListener {
  return {
    name: 'hanger',
    config: { timeout_ms: 100 },
    definition: defineListener<{ text: string }>({
      payload: textPayload('hang'),
      handler: (_p, ctx) =>
        new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve())),
    }),
  };
}

/** A listener that asks `target` and keeps the reply it gets. */
function caller(replies: IncomingReply[]): TestListener {
  return {
    name: 'caller',
    peers: ['thrower', 'hanger'],
    definition: defineListener<{ text: string }>({
      payload: textPayload('ask'),
      handler: (p, ctx) =>
        ctx.send(
          p.text,
          p.text === 'thrower' ? '<boom><text>go</text></boom>' : '<hang><text>x</text></hang>',
        ),
      onReply: (reply) => {
        replies.push(reply);
      },
    }),
  };
}

function expectGenericReply(reply: IncomingReply | undefined, code: string): void {
  expect(reply?.kind).toBe('system-error');
  expect(reply?.payload.code).toBe(code);
  // Nothing of the cause reaches the sender.
  for (const leak of ['TypeError', 'ledger', SECRET, 'failure-record', 'HandlerTimeoutError', '100 ms'])
    expect(reply?.xml).not.toContain(leak);
}

function failureOf(messages: readonly MessageView[]): MessageView | undefined {
  return messages.find((m) => m.kind === 'failure');
}

afterEach(() => {
  knownSecrets.set('failure-record-test', []);
});

describe('failure records on the in-process bus', () => {
  let bus: Bus | undefined;
  afterEach(async () => {
    await bus?.stop(100);
    bus = undefined;
  });

  it('records why a handler threw (class, redacted message, file:line); the caller gets the generic SystemError', async () => {
    knownSecrets.set('failure-record-test', [SECRET]);
    const replies: IncomingReply[] = [];
    bus = startBus([caller(replies), thrower(), hanger()]);
    const { thread } = await bus.inject({ to: 'caller', payload: '<ask><text>thrower</text></ask>' });
    const messages = await settled(bus, thread);
    expect(messages.map((m) => `${m.from}->${m.to} ${m.kind}`)).toEqual([
      'api->caller message',
      'caller->thrower message',
      'thrower->system failure',
      'system->caller system-error',
    ]);
    const failure = failureOf(messages)!;
    expect(failure.payload).toContain('<listener>thrower</listener><code>handler.failed</code>');
    expect(failure.payload).toContain('<error>TypeError</error>');
    expect(failure.payload).toContain('<message>cannot read the ledger (key [REDACTED])</message>');
    expect(failure.payload).toContain(`<at>test/bus/failure-record.test.ts:${THROW_LINE}</at>`);
    expect(failure.payload).not.toContain(SECRET);
    expect(replies).toHaveLength(1);
    expectGenericReply(replies[0], 'handler.failed');
    // The system-error in the history is the generic one the caller got.
    expect(messages[3]!.payload).toBe(replies[0]!.xml);
  });

  it('records a timeout with the listener and its limit; the caller gets handler.timeout only', async () => {
    const replies: IncomingReply[] = [];
    bus = startBus([caller(replies), thrower(), hanger()]);
    const { thread } = await bus.inject({ to: 'caller', payload: '<ask><text>hanger</text></ask>' });
    const messages = await settled(bus, thread);
    const failure = failureOf(messages)!;
    expect(failure.from).toBe('hanger');
    expect(failure.payload).toBe(
      '<failure><listener>hanger</listener><code>handler.timeout</code><error>HandlerTimeoutError</error>' +
        '<message>handler hanger timed out after 100 ms</message></failure>',
    );
    expectGenericReply(replies[0], 'handler.timeout');
  });
});

describe('failure records on Redis', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
  });

  async function daemon(group: string, listeners: TestListener[]): Promise<Bus> {
    const bus = { ...TEST_BUS, transport: 'redis' as const, url: SHARED_REDIS, group };
    const backend: BusBackend = await createBusBackend(
      { bus, limits: TEST_LIMITS, listeners: [] },
      pino({ level: 'silent' }),
    );
    const b = new Bus(listeners.map(listenerSpec), backend.transport, {
      limits: TEST_LIMITS,
      bus,
      logger: pino({ level: 'silent' }),
      threadStore: backend.threadStore,
    });
    b.start();
    cleanups.push(async () => {
      await b.stop(200);
      await backend.close();
    });
    return b;
  }

  it('puts the record in the shared history: another daemon reading the thread sees it', async () => {
    knownSecrets.set('failure-record-test', [SECRET]);
    const group = `failure-${randomUUID().slice(0, 8)}`;
    cleanups.push(() => dropGroup(SHARED_REDIS, group));
    const replies: IncomingReply[] = [];
    // Only daemon a runs the listeners; daemon b only reads threads.
    const a = await daemon(group, [caller(replies), thrower(), hanger()]);
    const b = await daemon(group, []);
    const { thread } = await a.inject({ to: 'caller', payload: '<ask><text>thrower</text></ask>' });
    await settled(a, thread);
    const failure = await until(async () => {
      await b.loadThread(thread);
      return failureOf(b.thread(thread)?.messages ?? []);
    }, 'daemon b to read the failure record');
    expect(failure?.from).toBe('thrower');
    expect(failure?.payload).toContain('<error>TypeError</error>');
    expect(failure?.payload).toContain('key [REDACTED]');
    expect(failure?.payload).toContain(`failure-record.test.ts:${THROW_LINE}</at>`);
    expectGenericReply(replies[0], 'handler.failed');
  });
});

describe('topFrame', () => {
  const stack = [
    'TypeError: x',
    '    at helper (node:internal/process/task_queues:95:5)',
    '    at lib (/srv/app/node_modules/lib/index.js:3:9)',
    '    at util (file:///srv/app/listeners/util.ts:4:11)',
    '    at async Object.handler (file:///srv/app/listeners/greeter.ts:12:7)',
    '    at data:text/javascript,aaaa:1:2',
  ].join('\n');

  it("prefers the listener's own module, then the first frame outside node_modules and node", () => {
    expect(topFrame(stack, '/srv/app/listeners/greeter.ts')).toBe('/srv/app/listeners/greeter.ts:12');
    expect(topFrame(stack, undefined)).toBe('/srv/app/listeners/util.ts:4');
    expect(topFrame('Error: y\n    at data:text/javascript,aaaa:1:2', undefined)).toBeUndefined();
  });
});
