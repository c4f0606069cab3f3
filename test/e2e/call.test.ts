/**
 * POST /api/v1/call against the real daemon: the reply's payload decoded by the listener's response
 * schema, a failing thread as an error with its thread id and what happened, 504 with the thread id
 * on timeout (the thread goes on), the same credential, role and input checks as /inject.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DaemonProcess } from '../helpers/daemon.ts';
import {
  ADMIN_TOKEN,
  AUTH_YAML,
  call,
  OPERATOR_TOKEN,
  organismDir,
  startOn,
  TOKENS_ENV,
  until,
  VIEWER_TOKEN,
} from '../server/helpers.ts';
import { CALL_LISTENERS } from './call-support/organism.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('POST /api/v1/call', () => {
  let daemon: DaemonProcess;
  const post = (body: unknown, token: string | null = OPERATOR_TOKEN) =>
    call(daemon.url, '/api/v1/call', { method: 'POST', body, token });

  beforeAll(async () => {
    const { file } = await organismDir(`organism:\n  name: calls\n${AUTH_YAML}listeners:\n${CALL_LISTENERS}`);
    daemon = await startOn(file, TOKENS_ENV);
  });
  afterAll(async () => {
    await daemon?.stop();
  });

  it("answers the reply's payload as JSON, decoded by the listener's response schema", async () => {
    const r = await post({
      to: 'quote',
      payload: '<quote-request><item>pen</item><qty>3</qty></quote-request>',
    });
    expect(r.status).toBe(200);
    expect(r.json.thread).toMatch(UUID);
    expect(r.json.status).toBe('replied');
    // Typed by the schema: a number, an integer and a boolean, not the XML's text.
    expect(r.json.reply.tag).toBe('quote');
    expect(r.json.reply.payload).toEqual({ item: 'pen', qty: 3, total: 4.5, rush: false });
    expect(r.json.reply.xml).toContain('<total>4.5</total>');
    // The thread is the one the reply is in.
    const thread = await call(daemon.url, `/api/v1/threads/${r.json.thread}`, { token: OPERATOR_TOKEN });
    expect(thread.json.messages.map((m: { from: string; to: string }) => `${m.from}->${m.to}`)).toEqual([
      'api->quote',
      'quote->api',
    ]);
  });

  it('routes by the root tag when no "to" is given', async () => {
    const r = await post({ payload: '<quote-request><item>ink</item><qty>2</qty></quote-request>' });
    expect(r.status).toBe(200);
    expect(r.json.reply.payload).toMatchObject({ item: 'ink', qty: 2, total: 3 });
  });

  it('a handler failure is a 502 call.failed with the thread id and what happened', async () => {
    const r = await post({ to: 'broken', payload: '<break><text>purpose</text></break>' });
    expect(r.status).toBe(502);
    expect(r.json.error.code).toBe('call.failed');
    expect(r.json.error.thread).toMatch(UUID);
    expect(r.json.error.message).toContain(
      `thread ${r.json.error.thread} failed without a reply from broken`,
    );
    expect(r.json.error.message).toContain('TypeError: boom on purpose');
    expect(r.json.error.failure).toMatchObject({
      kind: 'failure',
      from: 'broken',
      payload: { listener: 'broken', code: 'handler.failed', error: 'TypeError', message: 'boom on purpose' },
    });
  });

  it('a thread that ends without a reply or a failure answers 200 with reply null', async () => {
    const r = await post({ to: 'greeter', payload: '<greeting><name>Ada</name></greeting>' });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ status: 'ended', reply: null });
    expect(r.json.thread).toMatch(UUID);
  });

  it('no answer within timeout_ms is a 504 with the thread id; the thread goes on and replies later', async () => {
    const started = Date.now();
    const r = await post({ to: 'slow', payload: '<slow><ms>1500</ms></slow>', timeout_ms: 300 });
    expect(r.status).toBe(504);
    expect(Date.now() - started).toBeLessThan(1400);
    expect(r.json.error.code).toBe('call.timeout');
    expect(r.json.error.message).toContain('no answer from slow within 300 ms');
    const thread = r.json.error.thread as string;
    expect(thread).toMatch(UUID);
    await until(async () => {
      const view = await call(daemon.url, `/api/v1/threads/${thread}`, { token: OPERATOR_TOKEN });
      return view.json.messages.some((m: { from: string; to: string }) => m.from === 'slow' && m.to === 'api')
        ? true
        : undefined;
    });
  });

  it('a thread killed while the call waits is a 502 call.stopped', async () => {
    const pending = post({ to: 'slow', payload: '<slow><ms>20000</ms></slow>', timeout_ms: 20_000 });
    const thread = await until(async () => {
      const page = await call(daemon.url, '/api/v1/threads?status=active&listener=slow', {
        token: OPERATOR_TOKEN,
      });
      return page.json.threads[0]?.thread as string | undefined;
    });
    const killed = await call(daemon.url, `/api/v1/threads/${thread}/kill`, {
      method: 'POST',
      token: ADMIN_TOKEN,
    });
    expect(killed.status).toBe(200);
    const r = await pending;
    expect(r.status).toBe(502);
    expect(r.json.error).toMatchObject({ code: 'call.stopped', thread });
    expect(r.json.error.message).toContain('thread.killed');
  });

  it('timeout_ms out of bounds is refused before anything is injected', async () => {
    for (const timeout_ms of [0, 300_001, 1.5, '100']) {
      const r = await post({
        to: 'quote',
        payload: '<quote-request><item>a</item><qty>1</qty></quote-request>',
        timeout_ms,
      });
      expect(r.status).toBe(400);
      expect(r.json.error.message).toContain(
        '`timeout_ms` must be a whole number of milliseconds, 1..300000',
      );
    }
  });

  it('the same checks as inject: a credential, the operator role, the payload and the target', async () => {
    const body = { to: 'quote', payload: '<quote-request><item>a</item><qty>1</qty></quote-request>' };
    expect((await post(body, null)).status).toBe(401);
    expect((await post(body, VIEWER_TOKEN)).status).toBe(403);
    const invalid = await post({ to: 'quote', payload: '<quote-request><qty>x</qty></quote-request>' });
    expect(invalid.status).toBe(422);
    expect(invalid.json.huh).toContain('<huh>');
    const unknown = await post({ to: 'quot', payload: body.payload });
    expect(unknown.status).toBe(404);
    expect(unknown.json.error.message).toBe("no listener named 'quot' — did you mean 'quote'?");
  });
});
