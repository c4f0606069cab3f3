/**
 * Attacks on the failure records (src/bus/failure.ts): a handler is untrusted, so what it throws
 * is hostile input. Markup in its message stays text of the record, a known secret is redacted, a
 * huge message is cut, and a thrown value built to break the runtime (a Proxy whose every trap
 * throws, an Error whose message getter throws, a class named with markup) costs that one message:
 * the thread still gets its generic SystemError and the bus goes on serving.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { knownSecrets } from '../../src/audit/redact.ts';
import { Bus } from '../../src/bus/bus.ts';
import { describeFailure, failureXml } from '../../src/bus/failure.ts';
import type { MessageView } from '../../src/bus/message.ts';
import { MemoryTransport } from '../../src/bus/transport/memory.ts';
import { defineListener } from '../../src/listener/types.ts';
import { createLogger } from '../../src/observability/logger.ts';
import {
  listenerSpec,
  settled,
  startBus,
  TEST_BUS,
  TEST_LIMITS,
  type TestListener,
  textPayload,
} from '../helpers/bus.ts';

const SECRET = 'atk-Secret-7Hq2Lp9Xw4Zr';

afterEach(() => {
  knownSecrets.set('failure-attack-test', []);
});

const hostile: Record<string, () => unknown> = {
  markup: () => new Error(`</message></failure><failure><code>handler.ok</code><x>&amp;`),
  secret: () => new Error(`db said: password ${SECRET} is wrong`),
  huge: () => new Error(`${'the ledger is gone '.repeat(100_000)}</message>`),
  proxy: () =>
    new Proxy(
      {},
      {
        get() {
          throw new Error('trap get');
        },
        getPrototypeOf() {
          throw new Error('trap proto');
        },
        has() {
          throw new Error('trap has');
        },
        ownKeys() {
          throw new Error('trap keys');
        },
        getOwnPropertyDescriptor() {
          throw new Error('trap desc');
        },
      },
    ),
  getter: () => {
    const e = new Error('x');
    Object.defineProperty(e, 'stack', {
      get() {
        throw new Error('stack getter');
      },
    });
    Object.defineProperty(e, 'message', {
      get() {
        throw new Error('message getter');
      },
    });
    return e;
  },
  markupClass: () => {
    const Named = { ['</error><code>x</code>']: class extends Error {} }['</error><code>x</code>']!;
    return new Named('named');
  },
  cyclic: () => {
    const o: Record<string, unknown> = {};
    o.self = o;
    o.toString = () => {
      throw new Error('toString');
    };
    return o;
  },
  bigint: () => 10n,
  symbol: () => Symbol('s'),
  undefinedValue: () => undefined,
};

describe('describeFailure / failureXml on hostile throws', () => {
  it('keeps markup as text, redacts a known secret, cuts a huge message', () => {
    knownSecrets.set('failure-attack-test', [SECRET]);
    const markup = failureXml('l', describeFailure(hostile.markup!(), undefined));
    expect(markup.match(/<failure>/g)).toHaveLength(1);
    expect(markup.match(/<code>/g)).toHaveLength(1);
    expect(markup).toContain('&lt;/message&gt;&lt;/failure&gt;');
    const secret = failureXml('l', describeFailure(hostile.secret!(), undefined));
    expect(secret).not.toContain(SECRET);
    expect(secret).toContain('[REDACTED]');
    const huge = failureXml('l', describeFailure(hostile.huge!(), undefined));
    expect(huge.length).toBeLessThan(2000);
    expect(huge).toContain('more chars]');
  });

  for (const [name, make] of Object.entries(hostile)) {
    it(`does not throw for a thrown ${name}`, () => {
      const cause = describeFailure(make(), undefined);
      const xml = failureXml('l', cause);
      expect(xml.startsWith('<failure><listener>l</listener><code>handler.failed</code>')).toBe(true);
      expect(xml.match(/<failure>/g)).toHaveLength(1);
      expect(xml.match(/<error>/g)).toHaveLength(1);
    });
  }
});

describe('hostile throws on the bus', () => {
  let bus: Bus | undefined;
  afterEach(async () => {
    await bus?.stop(100);
    bus = undefined;
  });

  it('each costs one message: a failure record and a SystemError per throw, and the bus still answers', async () => {
    const thrower: TestListener = {
      name: 'thrower',
      definition: defineListener<{ text: string }>({
        payload: textPayload('boom'),
        handler: (p) => {
          const make = hostile[p.text];
          if (make) throw make();
          return { to: 'echo', payload: `<echo><text>${p.text}</text></echo>` } as never;
        },
      }),
    };
    bus = startBus([thrower]);
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      for (const name of Object.keys(hostile)) {
        const { thread } = await bus.inject({ to: 'thrower', payload: `<boom><text>${name}</text></boom>` });
        const messages: readonly MessageView[] = await settled(bus, thread);
        const failure = messages.find((m) => m.kind === 'failure');
        expect(failure, name).toBeDefined();
        expect(failure!.payload.match(/<failure>/g), name).toHaveLength(1);
      }
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
    expect(unhandled).toEqual([]);
  });
});

describe('hostile throws with the daemon logger at info', () => {
  /** A bus with one listener, `thrower`, whose handler throws what `toThrow` gives; its log lines. */
  async function throwOnce(
    toThrow: () => unknown,
  ): Promise<{ messages: readonly MessageView[]; lines: string[] }> {
    const lines: string[] = [];
    const logger = createLogger({
      level: 'info',
      organism: 'attack',
      destination: { write: (line: string) => void lines.push(line) },
    });
    const thrower: TestListener = {
      name: 'thrower',
      definition: defineListener<{ text: string }>({
        payload: textPayload('boom'),
        handler: () => {
          throw toThrow();
        },
      }),
    };
    const bus = new Bus([listenerSpec(thrower)], new MemoryTransport(), {
      limits: TEST_LIMITS,
      bus: TEST_BUS,
      logger,
    });
    bus.start();
    try {
      const { thread } = await bus.inject({ to: 'thrower', payload: '<boom><text>x</text></boom>' });
      return { messages: await settled(bus, thread), lines };
    } finally {
      await bus.stop(100);
    }
  }

  it('a Proxy thrown by a handler is logged as unreadable and the thread still gets its failure record', async () => {
    const { messages, lines } = await throwOnce(() => hostile.proxy!());
    expect(messages.some((m) => m.kind === 'failure')).toBe(true);
    expect(messages.some((m) => m.kind === 'system-error')).toBe(true);
    expect(lines.some((l) => l.includes('handler threw') && l.includes('unreadable'))).toBe(true);
  });

  it("a credential in a handler's error message is in neither the log line nor the failure record", async () => {
    const { messages, lines } = await throwOnce(
      () => new Error('cannot connect to postgres://app:Hunter2pass9@db.internal/ledger'),
    );
    const failure = messages.find((m) => m.kind === 'failure')!;
    expect(failure.payload).toContain('cannot connect to postgres://[REDACTED]@db.internal');
    const logged = lines.find((l) => l.includes('handler threw'));
    expect(logged).toContain('cannot connect to postgres://');
    expect(lines.join('\n')).not.toContain('Hunter2pass9');
  });
});
