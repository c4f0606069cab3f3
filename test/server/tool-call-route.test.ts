/**
 * POST /api/v1/tools/:tool/call, who may call as whom, on the app itself with a recording service:
 * an operator may act as the `mcp` identity only, never as a listener, one named `mcp` included
 * (allowed where organism.yaml has no mcp: section); an admin as any; a refused caller reaches no
 * dispatcher. The real daemon's side is test/e2e/tools-call-daemon.test.ts.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { Authenticator } from '../../src/server/auth.ts';
import { createApp } from '../../src/server/http.ts';
import { RateLimiter } from '../../src/server/rate-limit.ts';
import type { ApiToolCall, OrganismService } from '../../src/server/service.ts';
import { ADMIN_TOKEN, AUTH_YAML, OPERATOR_TOKEN, TOKENS_ENV } from './helpers.ts';

const TOKENS = [
  { name: 'root', role: 'admin' as const, token_env: 'TEST_ADMIN_TOKEN' },
  { name: 'ops', role: 'operator' as const, token_env: 'TEST_OPERATOR_TOKEN' },
];

function app(callers: Array<{ name: string; mcpIdentity: boolean }>) {
  expect(AUTH_YAML).toContain('TEST_OPERATOR_TOKEN'); // the same tokens as the daemon tests
  const calls: ApiToolCall[] = [];
  const service = {
    toolCallers: () => callers,
    admission: () => undefined,
    async callTool(call: ApiToolCall) {
      calls.push(call);
      return { thread: 'api-1', result: { status: 'ok' as const, tool: call.tool, value: 2 } };
    },
  } as unknown as OrganismService;
  const auth = Authenticator.fromConfig({ tokens: TOKENS }, TOKENS_ENV);
  const hono = createApp(service, {
    maxBodyBytes: 1 << 20,
    logger: pino({ level: 'silent' }),
    auth: () => auth,
    injectLimiter: () => new RateLimiter({ perSecond: 100, burst: 100 }),
    host: '127.0.0.1',
  });
  const ask = (token: string, as: string) =>
    hono.request('http://127.0.0.1/api/v1/tools/calculate/call', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', host: '127.0.0.1' },
      body: JSON.stringify({ as, args: { expression: '1 + 1' } }),
    });
  return { ask, calls };
}

describe('POST /api/v1/tools/:tool/call, who may call as whom', () => {
  it('an operator as the mcp identity; never as a listener, one named mcp included', async () => {
    const identity = app([
      { name: 'toolbox', mcpIdentity: false },
      { name: 'mcp', mcpIdentity: true },
    ]);
    expect((await identity.ask(OPERATOR_TOKEN, 'mcp')).status).toBe(200);
    expect((await identity.ask(OPERATOR_TOKEN, 'toolbox')).status).toBe(403);
    expect(identity.calls.map((c) => [c.as, c.by])).toEqual([['mcp', 'ops']]);

    // No mcp: section, and a listener of that name: the operator may not act as it.
    const listener = app([{ name: 'mcp', mcpIdentity: false }]);
    const refused = await listener.ask(OPERATOR_TOKEN, 'mcp');
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toBe(
      "calling a tool as listener 'mcp' (an operator may call as the mcp: section's identity only) needs the admin role; token 'ops' is operator",
    );
    expect(listener.calls).toEqual([]);
    expect((await listener.ask(ADMIN_TOKEN, 'mcp')).status).toBe(200);
    expect(listener.calls.map((c) => [c.as, c.by])).toEqual([['mcp', 'root']]);
  });
});
