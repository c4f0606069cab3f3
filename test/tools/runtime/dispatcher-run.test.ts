/** The later steps: rate limit, loop, run with a timeout, result cap, errors from the tool. */
import { describe, expect, it } from 'vitest';
import { capResult, utf8Prefix } from '../../../src/tools/result-cap.ts';
import type { ToolDefinition, ToolRunContext } from '../../../src/tools/types.ts';
import {
  bigString,
  bigTool,
  echoTool,
  makeDispatcher,
  memoryAudit,
  noopTool,
  slowTool,
  throwingTool,
} from './helpers.ts';

describe('rate limit', () => {
  it('lets a burst through, refuses the next, and refills at per_minute', async () => {
    let now = 1_000_000;
    const noop = noopTool();
    const d = makeDispatcher(
      [noop],
      [
        {
          name: 'alice',
          tools: ['noop'],
          tool_config: { noop: { rate_limit: { per_minute: 6, burst: 2 } } },
        },
      ],
      { now: () => now },
    );
    const run = (thread: string) => d.call({ tool: 'noop', args: {}, listener: 'alice', thread });
    expect((await run('a')).status).toBe('ok');
    expect((await run('b')).status).toBe('ok');
    const limited = await run('c');
    expect(limited).toMatchObject({ status: 'refused', error: { code: 'RateLimited' } });
    if (limited.status === 'ok') throw new Error('unreachable');
    expect(limited.error.message).toBe('rate limit for noop (6 per minute) reached; retry in 10 s');
    expect(noop.runs).toHaveLength(2);
    now += 10_000; // 6 per minute: one token every 10 s
    expect((await run('d')).status).toBe('ok');
    expect((await run('e')).status).toBe('refused');
  });

  it('keeps a bucket per listener and tool', async () => {
    const config = { noop: { rate_limit: { per_minute: 1, burst: 1 } } };
    const d = makeDispatcher(
      [noopTool()],
      [
        { name: 'alice', tools: ['noop'], tool_config: config },
        { name: 'bob', tools: ['noop'], tool_config: config },
      ],
      { now: () => 0 },
    );
    expect((await d.call({ tool: 'noop', args: {}, listener: 'alice', thread: 'x' })).status).toBe('ok');
    expect((await d.call({ tool: 'noop', args: {}, listener: 'bob', thread: 'y' })).status).toBe('ok');
    expect((await d.call({ tool: 'noop', args: {}, listener: 'alice', thread: 'z' })).status).toBe('refused');
  });
});

describe('loop detection', () => {
  it('refuses the same tool with the same arguments a third time within five calls of a thread', async () => {
    const echo = echoTool();
    const d = makeDispatcher([echo, noopTool()], [{ name: 'alice', tools: ['echo', 'noop'] }]);
    const echoCall = (args: object, thread = 't') =>
      d.call({ tool: 'echo', args, listener: 'alice', thread });
    expect((await echoCall({ text: 'a', times: 1 })).status).toBe('ok');
    expect((await d.call({ tool: 'noop', args: {}, listener: 'alice', thread: 't' })).status).toBe('ok');
    // Same call, keys in another order and the default made explicit: still the same call.
    expect((await echoCall({ times: 1, text: 'a' })).status).toBe('ok');
    const third = await echoCall({ text: 'a' });
    expect(third).toMatchObject({ status: 'refused', error: { code: 'LoopDetected' } });
    if (third.status === 'ok') throw new Error('unreachable');
    expect(third.error.message).toContain('3 times within the last 5 calls');
    expect(echo.runs).toHaveLength(2);
    // Other arguments, and other threads, are not loops.
    expect((await echoCall({ text: 'b' })).status).toBe('ok');
    expect((await echoCall({ text: 'a' }, 'other-thread')).status).toBe('ok');
  });

  it('recognises a repeated call with long arguments (remembered by hash)', async () => {
    const d = makeDispatcher([echoTool()], [{ name: 'alice', tools: ['echo'] }]);
    const text = 'x'.repeat(10_000);
    const statuses: string[] = [];
    for (const t of [text, `${text}y`, text, text]) {
      statuses.push(
        (await d.call({ tool: 'echo', args: { text: t }, listener: 'alice', thread: 't' })).status,
      );
    }
    expect(statuses).toEqual(['ok', 'ok', 'ok', 'refused']);
  });

  it('forgets calls that fell out of the five-call window', async () => {
    const d = makeDispatcher([echoTool()], [{ name: 'alice', tools: ['echo'] }]);
    const echoCall = (text: string) =>
      d.call({ tool: 'echo', args: { text }, listener: 'alice', thread: 't' });
    const statuses: string[] = [];
    for (const text of ['a', 'a', 'b', 'c', 'd', 'e', 'a']) statuses.push((await echoCall(text)).status);
    expect(statuses).toEqual(['ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok']);
  });
});

describe('run', () => {
  it('times out a slow tool, aborts its signal, and answers status error', async () => {
    const slow = slowTool();
    const d = makeDispatcher(
      [slow],
      [{ name: 'alice', tools: ['slow'], tool_config: { slow: { timeout_ms: 50 } } }],
    );
    const result = await d.call({ tool: 'slow', args: {}, listener: 'alice', thread: 't' });
    expect(result).toEqual({
      status: 'error',
      tool: 'slow',
      error: { code: 'Timeout', message: 'tool slow timed out after 50 ms' },
    });
    expect(slow.state.aborted).toBe(true);
  });

  it('a signal first read after the timeout is already aborted; the context names the time limit', async () => {
    // The AbortController is made on first read of ctx.signal (most tools never read it): a tool
    // that looks only after its time is up must still see it aborted, with the timeout as reason.
    let late: AbortSignal | undefined;
    let limit: number | undefined;
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const tool = {
      ...noopTool('late'),
      run: async (_args: unknown, ctx: ToolRunContext) => {
        limit = ctx.timeoutMs;
        await new Promise((resolve) => setTimeout(resolve, 120));
        late = ctx.signal;
        finish();
        return { ok: true };
      },
    };
    const d = makeDispatcher(
      [tool],
      [{ name: 'alice', tools: ['late'], tool_config: { late: { timeout_ms: 40 } } }],
    );
    const result = await d.call({ tool: 'late', args: {}, listener: 'alice', thread: 't' });
    expect(result).toMatchObject({ status: 'error', error: { code: 'Timeout' } });
    await finished;
    expect(limit).toBe(40);
    expect(late?.aborted).toBe(true);
    expect(String(late?.reason)).toContain('timed out after 40 ms');
  });

  it('a tool that throws before its first await is a failure like one that rejects', async () => {
    const tool = {
      ...noopTool('eager'),
      run: ((_args: unknown) => {
        throw new Error('thrown at once');
      }) as unknown as ToolDefinition['run'],
    };
    const d = makeDispatcher([tool], [{ name: 'alice', tools: ['eager'] }]);
    const result = await d.call({ tool: 'eager', args: {}, listener: 'alice', thread: 't' });
    expect(result).toMatchObject({
      status: 'error',
      error: { code: 'ToolError', message: 'tool eager failed: thrown at once' },
    });
  });

  it('a tool that throws is status error with its message, secrets scrubbed', async () => {
    const d = makeDispatcher([throwingTool()], [{ name: 'alice', tools: ['thrower'] }]);
    const result = await d.call({ tool: 'thrower', args: {}, listener: 'alice', thread: 't' });
    expect(result.status).toBe('error');
    if (result.status === 'ok') throw new Error('unreachable');
    expect(result.error.code).toBe('ToolError');
    expect(result.error.message).toContain('tool thrower failed: backend said no');
    expect(result.error.message).not.toContain('sk-test0123456789');
  });

  it('a result that is not JSON is an error, not a crash', async () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const tool = { ...noopTool('cyclic'), run: async () => cyclic };
    const d = makeDispatcher([tool], [{ name: 'alice', tools: ['cyclic'] }]);
    expect(await d.call({ tool: 'cyclic', args: {}, listener: 'alice', thread: 't' })).toMatchObject({
      status: 'error',
      error: { code: 'ResultNotSerializable' },
    });
  });
});

describe('result cap', () => {
  it('caps a 1 MB result at 102,400 bytes on a UTF-8 boundary with a marker giving the original size', async () => {
    const audit = memoryAudit();
    const d = makeDispatcher([bigTool()], [{ name: 'alice', tools: ['big'] }], { audit });
    const result = await d.call({ tool: 'big', args: {}, listener: 'alice', thread: 't' });
    expect(result.status).toBe('ok');
    if (result.status !== 'ok') throw new Error('unreachable');
    const original = Buffer.byteLength(JSON.stringify(bigString(1024 * 1024, 102_400)), 'utf8');
    expect(original).toBeGreaterThan(1_000_000);
    expect(result.truncated).toEqual({ original_bytes: original });
    const text = result.value as string;
    expect(typeof text).toBe('string');
    const bytes = Buffer.byteLength(text, 'utf8');
    expect(bytes).toBeLessThanOrEqual(102_400);
    expect(bytes).toBeGreaterThan(102_400 - 4 - 80);
    expect(text.endsWith(`[truncated: result was ${original} bytes of JSON, limit 102400]`)).toBe(true);
    // No character was split: re-encoding gives the same bytes and no replacement character.
    expect(text).not.toContain('\uFFFD');
    expect(text.startsWith('"aaaa')).toBe(true);
    const head = text.slice(0, text.indexOf('\n[truncated'));
    expect(head.endsWith('\u{1F600}')).toBe(true);
  });

  it('honours tool_config.max_result_bytes and leaves small results alone', async () => {
    const d = makeDispatcher(
      [echoTool()],
      [{ name: 'alice', tools: ['echo'], tool_config: { echo: { max_result_bytes: 300 } } }],
    );
    const small = await d.call({ tool: 'echo', args: { text: 'hi' }, listener: 'alice', thread: 't' });
    expect(small).toEqual({ status: 'ok', tool: 'echo', value: { text: 'hi' } });
    const large = await d.call({
      tool: 'echo',
      args: { text: 'ü', times: 500 },
      listener: 'alice',
      thread: 't',
    });
    if (large.status !== 'ok') throw new Error(JSON.stringify(large));
    expect(Buffer.byteLength(large.value as string, 'utf8')).toBeLessThanOrEqual(300);
    expect(large.truncated).toEqual({
      original_bytes: Buffer.byteLength(JSON.stringify({ text: 'ü'.repeat(500) })),
    });
  });

  it('utf8Prefix never cuts inside a 2-, 3- or 4-byte character', () => {
    for (const ch of ['é', '€', '\u{1F600}']) {
      const bytes = Buffer.from(`ab${ch}${ch}`, 'utf8');
      for (let max = 0; max <= bytes.length; max++) {
        const cut = utf8Prefix(bytes, max);
        expect(cut.length).toBeLessThanOrEqual(max);
        expect(Buffer.from(cut.toString('utf8'), 'utf8').equals(cut)).toBe(true);
      }
    }
    expect(utf8Prefix(Buffer.from('a€', 'utf8'), 3).toString()).toBe('a');
    expect(utf8Prefix(Buffer.from('a€', 'utf8'), 4).toString()).toBe('a€');
  });

  it('capResult keeps values under the cap untouched', () => {
    const value = { list: [1, 2, 3] };
    expect(capResult(value, 1000)).toEqual({ value });
    expect(capResult(undefined, 1000)).toEqual({ value: undefined });
  });
});
