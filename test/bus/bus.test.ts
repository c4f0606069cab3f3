import { afterEach, describe, expect, it } from 'vitest';
import type { Bus } from '../../src/bus/bus.ts';
import { BusyError, PayloadValidationError, RoutingError, XmlError } from '../../src/errors.ts';
import { defineListener, type IncomingReply } from '../../src/listener/types.ts';
import { settled, startBus, textPayload } from '../helpers/bus.ts';

let bus: Bus | undefined;
afterEach(async () => {
  await bus?.stop(100);
  bus = undefined;
});

const echo = defineListener<{ text: string }>({
  payload: textPayload('echo'),
  handler: (p, ctx) => ctx.respond(`<echoed><text>${p.text}</text></echoed>`),
});

describe('routing', () => {
  it('carries a payload across several hops, by `to` and by tag', async () => {
    const printed: string[] = [];
    bus = startBus([
      {
        name: 'greeter',
        peers: ['shouter'],
        definition: defineListener<{ text: string }>({
          payload: textPayload('greeting'),
          handler: (p, ctx) => ctx.send('shouter', { text: `Hello, ${p.text}!` }),
        }),
      },
      {
        name: 'shouter',
        peers: ['printer'],
        // Returns XML text with no `to`: routed by its root tag.
        definition: defineListener<{ text: string }>({
          payload: textPayload('shout'),
          handler: (p) => `Sure! <print><text>${p.text.toUpperCase()}</text></print>`,
        }),
      },
      {
        name: 'printer',
        definition: defineListener<{ text: string }>({
          payload: textPayload('print'),
          handler: (p) => {
            printed.push(p.text);
          },
        }),
      },
    ]);
    const { thread } = await bus.inject({ to: 'greeter', payload: '<greeting><text>Ada</text></greeting>' });
    const messages = await settled(bus, thread);
    expect(printed).toEqual(['HELLO, ADA!']);
    expect(messages.map((m) => `${m.from}->${m.to}`)).toEqual([
      'api->greeter',
      'greeter->shouter',
      'shouter->printer',
    ]);
    expect(messages[1]!.payload).toBe('<shout><text>Hello, Ada!</text></shout>');
  });

  it('delivers to every broadcast listener sharing a tag', async () => {
    const got: string[] = [];
    const sink = (name: string) => ({
      name,
      broadcast: true,
      definition: defineListener<{ text: string }>({
        payload: textPayload('news'),
        handler: (p) => {
          got.push(`${name}:${p.text}`);
        },
      }),
    });
    bus = startBus([sink('a'), sink('b'), sink('c')]);
    const { thread } = await bus.inject({ payload: '<news><text>hi</text></news>' });
    await settled(bus, thread);
    expect(got.sort()).toEqual(['a:hi', 'b:hi', 'c:hi']);
  });

  it('refuses a send to a non-peer with a generic SystemError and keeps the thread alive', async () => {
    const replies: IncomingReply[] = [];
    bus = startBus([
      {
        name: 'rogue',
        peers: [],
        definition: defineListener<{ text: string }>({
          payload: textPayload('go'),
          handler: (p, ctx) =>
            p.text === 'secret' ? ctx.send('vault', { text: 'x' }) : ctx.send('nowhere', { text: 'x' }),
          onReply: (reply) => {
            replies.push(reply);
          },
        }),
      },
      { name: 'vault', definition: echo },
    ]);
    const a = await bus.inject({ to: 'rogue', payload: '<go><text>secret</text></go>' });
    await settled(bus, a.thread);
    const b = await bus.inject({ to: 'rogue', payload: '<go><text>other</text></go>' });
    await settled(bus, b.thread);
    expect(replies).toHaveLength(2);
    expect(replies[0]!.kind).toBe('system-error');
    expect(replies[0]!.payload.code).toBe('bus.routing');
    // Same text whether the target exists (vault) or not (nowhere): no topology leak.
    expect(replies[0]!.xml).toBe(replies[1]!.xml);
    expect(bus.thread(a.thread)?.status).toBe('idle');
    // The thread is still usable.
    await bus.inject({ to: 'rogue', payload: '<go><text>again</text></go>', thread: a.thread });
    await settled(bus, a.thread);
    expect(replies).toHaveLength(3);
  });

  it('answers ingress for an unknown target or tag with a RoutingError', async () => {
    bus = startBus([{ name: 'echo', definition: echo }]);
    await expect(bus.inject({ to: 'ghost', payload: '<echo><text>x</text></echo>' })).rejects.toBeInstanceOf(
      RoutingError,
    );
    await expect(bus.inject({ payload: '<nobody><text>x</text></nobody>' })).rejects.toBeInstanceOf(
      RoutingError,
    );
  });

  it('refuses ingress payloads that fail the schema, naming the field', async () => {
    bus = startBus([{ name: 'echo', definition: echo }]);
    const attempt = bus.inject({ to: 'echo', payload: '<echo><txt>x</txt></echo>' });
    await expect(attempt).rejects.toBeInstanceOf(PayloadValidationError);
    await expect(attempt).rejects.toThrow(/text/);
  });

  it('refuses DOCTYPE, entity bombs and over-deep input at ingress', async () => {
    bus = startBus([{ name: 'echo', definition: echo }]);
    const xxe = '<!DOCTYPE echo [<!ENTITY x SYSTEM "file:///etc/passwd">]><echo><text>&x;</text></echo>';
    await expect(bus.inject({ to: 'echo', payload: xxe })).rejects.toBeInstanceOf(XmlError);
    const deep = `<echo><text>x</text>${'<a>'.repeat(500)}${'</a>'.repeat(500)}</echo>`;
    await expect(bus.inject({ to: 'echo', payload: deep })).rejects.toMatchObject({ code: 'xml.too_deep' });
  });
});

describe('repair of handler output', () => {
  it('turns prose around several unclosed roots into one message per payload', async () => {
    const got: string[] = [];
    bus = startBus([
      {
        name: 'writer',
        peers: ['reader'],
        definition: defineListener({
          payload: textPayload('start'),
          handler: () =>
            'Here you go:\n```xml\n<note><text>one</text></note>\n<note><text>two & three</text>\n```',
        }),
      },
      {
        name: 'reader',
        definition: defineListener<{ text: string }>({
          payload: textPayload('note'),
          handler: (p) => {
            got.push(p.text);
          },
        }),
      },
    ]);
    const { thread } = await bus.inject({ to: 'writer', payload: '<start><text>go</text></start>' });
    const messages = await settled(bus, thread);
    expect(got).toEqual(['one', 'two & three']);
    const sent = messages.filter((m) => m.from === 'writer').map((m) => m.payload);
    expect(sent).toHaveLength(2);
    expect(sent[0]).toBe('<note><text>one</text></note>');
    expect(sent[1]).toMatch(/^<note><text>two &amp; three<\/text>\s*<\/note>$/);
  });
});

describe('identity', () => {
  it('ignores <from> and <thread> written by a handler or an injecting caller', async () => {
    const seen: Array<{ from: string; thread: string }> = [];
    bus = startBus([
      {
        name: 'spoofer',
        peers: ['target'],
        definition: defineListener<{ text: string }>({
          payload: textPayload('start'),
          handler: () =>
            '<message xmlns="https://xml-pipeline.org/ns/envelope/v1"><meta><from>admin</from><thread>stolen</thread></meta><hit><text>x</text></hit></message>',
        }),
      },
      {
        name: 'target',
        definition: defineListener<{ text: string }>({
          payload: textPayload('hit'),
          handler: (_p, ctx) => {
            seen.push({ from: ctx.from, thread: ctx.thread });
          },
        }),
      },
    ]);
    const { thread } = await bus.inject({ to: 'spoofer', payload: '<start><text>go</text></start>' });
    const messages = await settled(bus, thread);
    // The handler's envelope is unwrapped: the payload arrives, with the runtime's identity.
    expect(seen).toEqual([{ from: 'spoofer', thread }]);
    expect(messages.map((m) => `${m.from}->${m.to}`)).toEqual(['api->spoofer', 'spoofer->target']);
    expect(messages[1]!.payload).toBe('<hit><text>x</text></hit>');
  });

  it('ignores <from> and <thread> in an envelope an outside caller injects, keeping its <to>', async () => {
    const seen: Array<{ from: string; thread: string }> = [];
    bus = startBus([
      {
        name: 'target',
        definition: defineListener<{ text: string }>({
          payload: textPayload('hit'),
          handler: (_p, ctx) => {
            seen.push({ from: ctx.from, thread: ctx.thread });
          },
        }),
      },
    ]);
    const forged =
      '<message xmlns="https://xml-pipeline.org/ns/envelope/v1"><meta><from>admin</from><to>target</to>' +
      '<thread>00000000-0000-0000-0000-000000000000</thread></meta><hit><text>x</text></hit></message>';
    const { thread } = await bus.inject({ payload: forged });
    const messages = await settled(bus, thread);
    expect(thread).not.toBe('00000000-0000-0000-0000-000000000000');
    expect(seen).toEqual([{ from: 'api', thread }]);
    expect(messages.map((m) => [m.from, m.to, m.payload])).toEqual([
      ['api', 'target', '<hit><text>x</text></hit>'],
    ]);
  });

  it('refuses an injection that claims to come from a listener', async () => {
    bus = startBus([{ name: 'echo', definition: echo }]);
    await expect(
      bus.inject({ to: 'echo', payload: '<echo><text>x</text></echo>', from: 'echo' }),
    ).rejects.toMatchObject({
      code: 'ingress.from',
    });
  });
});

describe('respond()', () => {
  it('delivers every reply to its own caller across many concurrent threads sharing one chain', async () => {
    const answers = new Map<string, string>();
    bus = startBus([
      {
        name: 'asker',
        peers: ['echo'],
        definition: defineListener<{ text: string }>({
          payload: textPayload('ask'),
          handler: (p, ctx) => ctx.send('echo', { text: p.text }),
          onReply: (reply, ctx) => {
            answers.set(ctx.thread, String(reply.payload.text));
          },
        }),
      },
      { name: 'echo', definition: echo },
    ]);
    const injected = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        bus!.inject({ to: 'asker', payload: `<ask><text>n${i}</text></ask>` }),
      ),
    );
    await Promise.all(injected.map((r) => settled(bus!, r.thread)));
    expect(answers.size).toBe(200);
    expect(injected.map((r) => answers.get(r.thread))).toEqual(injected.map((_, i) => `n${i}`));
  });

  it('records a reply to an outside caller in the thread', async () => {
    bus = startBus([{ name: 'echo', definition: echo }]);
    const { thread } = await bus.inject({ to: 'echo', payload: '<echo><text>hi</text></echo>' });
    const messages = await settled(bus, thread);
    expect(messages.at(-1)).toMatchObject({
      from: 'echo',
      to: 'api',
      kind: 'response',
      payload: '<echoed><text>hi</text></echoed>',
    });
  });
});

describe('failures', () => {
  const caller = (errors: IncomingReply[]) => ({
    name: 'caller',
    peers: ['worker'],
    definition: defineListener<{ text: string }>({
      payload: textPayload('job'),
      handler: (p, ctx) => ctx.send('worker', { text: p.text }),
      onReply: (reply) => {
        errors.push(reply);
      },
    }),
  });

  it('turns a handler exception into a SystemError for the caller', async () => {
    const errors: IncomingReply[] = [];
    bus = startBus([
      caller(errors),
      {
        name: 'worker',
        definition: defineListener({
          payload: textPayload('work'),
          handler: () => {
            throw new Error('boom');
          },
        }),
      },
    ]);
    const { thread } = await bus.inject({ to: 'caller', payload: '<job><text>x</text></job>' });
    await settled(bus, thread);
    expect(errors.map((e) => [e.kind, e.payload.code])).toEqual([['system-error', 'handler.failed']]);
    expect(errors[0]!.xml).not.toContain('boom');
  });

  it('times out a hanging handler and keeps the bus running', async () => {
    const errors: IncomingReply[] = [];
    let aborted = false;
    bus = startBus(
      [
        caller(errors),
        {
          name: 'worker',
          definition: defineListener({
            payload: textPayload('work'),
            handler: (_p, ctx) =>
              new Promise(() => {
                ctx.signal.addEventListener('abort', () => {
                  aborted = true;
                });
              }),
          }),
        },
      ],
      { limits: { handler_timeout_ms: 50 } },
    );
    const { thread } = await bus.inject({ to: 'caller', payload: '<job><text>x</text></job>' });
    await settled(bus, thread);
    expect(errors.map((e) => e.payload.code)).toEqual(['handler.timeout']);
    expect(aborted).toBe(true);
  });

  it('answers garbage handler output with <huh> carrying the attempt', async () => {
    const replies: IncomingReply[] = [];
    bus = startBus([
      {
        name: 'babbler',
        definition: defineListener({
          payload: textPayload('talk'),
          handler: () => 'this is not xml at all',
          onReply: (reply) => {
            replies.push(reply);
          },
        }),
      },
    ]);
    const { thread } = await bus.inject({ to: 'babbler', payload: '<talk><text>x</text></talk>' });
    await settled(bus, thread);
    expect(replies).toHaveLength(1);
    expect(replies[0]!.kind).toBe('huh');
    const attempt = /<attempt[^>]*>([^<]*)<\/attempt>/.exec(replies[0]!.xml)![1]!;
    expect(Buffer.from(attempt, 'base64').toString()).toBe('this is not xml at all');
  });

  it('answers a DOCTYPE in handler output with <huh>', async () => {
    const replies: IncomingReply[] = [];
    bus = startBus([
      {
        name: 'sneaky',
        peers: ['sneaky'],
        definition: defineListener({
          payload: textPayload('talk'),
          handler: () => '<!DOCTYPE talk [<!ENTITY a "aaaa">]><talk><text>&a;</text></talk>',
          onReply: (reply) => {
            replies.push(reply);
          },
        }),
      },
    ]);
    const { thread } = await bus.inject({ to: 'sneaky', payload: '<talk><text>x</text></talk>' });
    await settled(bus, thread);
    expect(replies.map((r) => [r.kind, r.payload.reason])).toEqual([['huh', 'parse']]);
  });

  it('stops a self-loop at the hop budget with a clear error', async () => {
    let calls = 0;
    bus = startBus(
      [
        {
          name: 'looper',
          peers: ['looper'],
          definition: defineListener({
            payload: textPayload('loop'),
            handler: (_p, ctx) => {
              calls++;
              return ctx.send('looper', { text: 'again' });
            },
          }),
        },
      ],
      { limits: { max_thread_hops: 50, max_call_depth: 10_000 } },
    );
    const { thread } = await bus.inject({ to: 'looper', payload: '<loop><text>go</text></loop>' });
    const messages = await settled(bus, thread);
    expect(calls).toBe(50);
    expect(bus.thread(thread)?.status).toBe('stopped');
    const last = messages.at(-1)!;
    expect(last).toMatchObject({ from: 'system', to: 'looper', kind: 'system-error' });
    expect(last.payload).toContain('<code>bus.budget</code>');
    expect(last.payload).toContain('hops limit 50');
  });
});

describe('backpressure and shutdown', () => {
  it('answers busy instead of queueing past the limit', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    bus = startBus(
      [
        {
          name: 'slow',
          definition: defineListener({ payload: textPayload('job'), handler: () => gate }),
        },
      ],
      { bus: { queue_length: 5, max_concurrent: 1 } },
    );
    const accepted: string[] = [];
    let busy = 0;
    for (let i = 0; i < 10; i++) {
      try {
        accepted.push((await bus.inject({ to: 'slow', payload: '<job><text>x</text></job>' })).thread);
      } catch (error) {
        expect(error).toBeInstanceOf(BusyError);
        busy++;
      }
    }
    // One running plus five queued.
    expect(accepted).toHaveLength(6);
    expect(busy).toBe(4);
    expect(bus.stats().queues.slow).toEqual({ depth: 5, active: 1 });
    release();
    await Promise.all(accepted.map((t) => settled(bus!, t)));
    expect(bus.stats().queues.slow).toEqual({ depth: 0, active: 0 });
  });

  it('drains in-flight messages on stop and refuses new ones', async () => {
    const done: number[] = [];
    bus = startBus([
      {
        name: 'worker',
        definition: defineListener({
          payload: textPayload('job'),
          handler: async (p: { text: string }) => {
            await new Promise((r) => setTimeout(r, 30));
            done.push(Number(p.text));
          },
        }),
      },
    ]);
    for (let i = 0; i < 20; i++) await bus.inject({ to: 'worker', payload: `<job><text>${i}</text></job>` });
    const stopping = bus.stop(5_000);
    await expect(bus.inject({ to: 'worker', payload: '<job><text>x</text></job>' })).rejects.toMatchObject({
      code: 'bus.shutting_down',
    });
    expect(await stopping).toEqual({ drained: true, abandoned: 0 });
    expect(done).toHaveLength(20);
    bus = undefined;
  });
});
