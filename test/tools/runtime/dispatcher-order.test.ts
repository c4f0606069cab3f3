/** Each dispatcher step in the order of invariant 4, each refusal a result that names what was wrong. */
import { describe, expect, it } from 'vitest';
import type { Verdict } from '../../../src/guard/types.ts';
import {
  echoTool,
  makeDispatcher,
  memoryAudit,
  noopTool,
  offlineTool,
  shellTool,
  tableGuard,
  webTool,
} from './helpers.ts';

const DENY: Verdict = {
  verdict: 'deny',
  rule_id: 'shell.rm.root',
  reason: 'removes the root file system',
  suggestion: 'remove a path inside the workspace',
};
const WARN: Verdict = {
  verdict: 'warn',
  rule_id: 'shell.git.push',
  reason: 'pushes to a remote',
  suggestion: 'check the branch',
};

function call(
  d: ReturnType<typeof makeDispatcher>,
  tool: string,
  args: unknown,
  listener = 'alice',
  extra = {},
) {
  return d.call({ tool, args, listener, thread: 't1', ...extra });
}

describe('dispatcher steps', () => {
  it('runs a granted tool and answers ok with its value', async () => {
    const noop = noopTool();
    const d = makeDispatcher([noop], [{ name: 'alice', tools: ['noop'] }]);
    const result = await call(d, 'noop', {});
    expect(result).toEqual({ status: 'ok', tool: 'noop', value: { ok: true } });
    expect(noop.runs).toHaveLength(1);
    expect(noop.runs[0]?.ctx.listener).toBe('alice');
    expect(noop.runs[0]?.ctx.thread).toBe('t1');
    expect(noop.runs[0]?.ctx.callId).toMatch(/[0-9a-f-]{36}/);
  });

  it('1. an unknown tool is ToolNotFound naming the tool (with a suggestion among the grants)', async () => {
    const d = makeDispatcher([echoTool()], [{ name: 'alice', tools: ['echo'] }]);
    const result = await call(d, 'ecko', { text: 'x' });
    expect(result.status).toBe('refused');
    if (result.status === 'ok') throw new Error('unreachable');
    expect(result.error.code).toBe('ToolNotFound');
    expect(result.error.message).toContain('"ecko"');
    expect(result.error.message).toContain('did you mean echo');
  });

  it('2. a tool not granted is PermissionDenied and does not run, even with bad arguments', async () => {
    const echo = echoTool();
    const d = makeDispatcher([echo, noopTool()], [{ name: 'alice', tools: ['noop'] }]);
    const result = await call(d, 'echo', { wrong: 1 });
    expect(result).toMatchObject({ status: 'refused', error: { code: 'PermissionDenied' } });
    if (result.status === 'ok') throw new Error('unreachable');
    expect(result.error.message).toBe('tool echo is not granted to alice');
    expect(echo.runs).toHaveLength(0);
  });

  it('2. an unknown listener has no grants', async () => {
    const d = makeDispatcher([noopTool()], [{ name: 'alice', tools: ['noop'] }]);
    expect(await call(d, 'noop', {}, 'mallory')).toMatchObject({
      status: 'refused',
      error: { code: 'PermissionDenied' },
    });
  });

  it('3. a revoked tool is refused with the reason, before integrity and argument checks', async () => {
    const echo = echoTool();
    let integrityChecked = false;
    const d = makeDispatcher([echo], [{ name: 'alice', tools: ['echo'] }], {
      revocations: { get: (tool) => (tool === 'echo' ? { reason: 'leaks data (CVE-1)' } : undefined) },
      integrity: {
        check: () => {
          integrityChecked = true;
          return 'changed';
        },
      },
    });
    const result = await call(d, 'echo', {});
    expect(result).toMatchObject({
      status: 'refused',
      error: { code: 'ToolRevoked', message: 'tool echo is revoked: leaks data (CVE-1)' },
    });
    expect(integrityChecked).toBe(false);
    expect(echo.runs).toHaveLength(0);
  });

  it('4. an integrity failure is IntegrityFailure, before availability and arguments', async () => {
    const offline = offlineTool();
    const d = makeDispatcher([offline], [{ name: 'alice', tools: ['offline'] }], {
      integrity: { check: (tool) => `tool ${tool.definition.name}: its module changed since it was signed` },
    });
    const result = await call(d, 'offline', { n: 'not a number' });
    expect(result).toMatchObject({ status: 'refused', error: { code: 'IntegrityFailure' } });
    if (result.status === 'ok') throw new Error('unreachable');
    expect(result.error.message).toContain('changed since it was signed');
  });

  it('5. an unavailable tool says why, before argument validation', async () => {
    const offline = offlineTool();
    const d = makeDispatcher([offline], [{ name: 'alice', tools: ['offline'] }]);
    const result = await call(d, 'offline', { n: 'x' });
    expect(result).toMatchObject({
      status: 'refused',
      error: {
        code: 'ToolUnavailable',
        message: 'tool offline is unavailable: no smtp section in organism.yaml',
      },
    });
    expect(offline.runs).toHaveLength(0);
  });

  it('6. invalid arguments name the field and what was expected; nothing runs', async () => {
    const echo = echoTool();
    const d = makeDispatcher([echo], [{ name: 'alice', tools: ['echo'] }]);
    const missing = await call(d, 'echo', {});
    expect(missing).toMatchObject({ status: 'refused', error: { code: 'InvalidArguments' } });
    if (missing.status === 'ok') throw new Error('unreachable');
    expect(missing.error.message).toBe("invalid arguments for echo: argument 'text' is required");

    const wrongType = await call(d, 'echo', { text: 'x', times: 'two' });
    if (wrongType.status === 'ok') throw new Error('unreachable');
    expect(wrongType.error.message).toContain("argument 'times' must be integer (got string)");

    const unknown = await call(d, 'echo', { text: 'x', colour: 'red' });
    if (unknown.status === 'ok') throw new Error('unreachable');
    expect(unknown.error.message).toContain(
      "argument 'colour' is not a known key (expected one of: text, times, api_key)",
    );
    expect(echo.runs).toHaveLength(0);
  });

  it("6. schema defaults reach the tool, and the caller's object is not changed", async () => {
    const echo = echoTool();
    const d = makeDispatcher([echo], [{ name: 'alice', tools: ['echo'] }]);
    const args = { text: 'ab' };
    const result = await call(d, 'echo', args);
    expect(result).toMatchObject({ status: 'ok', value: { text: 'ab' } });
    expect(echo.runs[0]?.args).toEqual({ text: 'ab', times: 1 });
    expect(args).toEqual({ text: 'ab' });
  });

  it('7. a capability outside the thread scope is refused, before the guard is asked', async () => {
    const guard = tableGuard();
    const shell = shellTool();
    const d = makeDispatcher(
      [shell, webTool(), noopTool()],
      [{ name: 'alice', tools: ['shellish', 'webby', 'noop'] }],
      {
        guard,
      },
    );
    const scope = ['read', 'fetch_web'] as const;
    const refused = await call(d, 'shellish', { command: 'ls' }, 'alice', { scope });
    expect(refused).toMatchObject({ status: 'refused', error: { code: 'OutsideScope' } });
    if (refused.status === 'ok') throw new Error('unreachable');
    expect(refused.error.message).toContain('needs capability exec_shell');
    expect(guard.calls).toHaveLength(0);
    expect(shell.runs).toHaveLength(0);
    expect(await call(d, 'webby', {}, 'alice', { scope })).toMatchObject({ status: 'ok' });
    expect(await call(d, 'noop', {}, 'alice', { scope })).toMatchObject({ status: 'ok' });
  });

  it('7. a scope never widens grants: a capability in scope does not grant an ungranted tool', async () => {
    const web = webTool();
    const d = makeDispatcher([web, noopTool()], [{ name: 'alice', tools: ['noop'] }]);
    const result = await call(d, 'webby', {}, 'alice', { scope: ['fetch_web', 'read'] });
    expect(result).toMatchObject({ status: 'refused', error: { code: 'PermissionDenied' } });
    expect(web.runs).toHaveLength(0);
    // An empty scope allows nothing.
    expect(await call(d, 'noop', {}, 'alice', { scope: [] })).toMatchObject({
      status: 'refused',
      error: { code: 'OutsideScope' },
    });
  });

  it('8. a guard deny refuses with rule id, reason and suggestion; the tool does not run', async () => {
    const shell = shellTool();
    const guard = tableGuard({ 'rm -rf /': DENY });
    const d = makeDispatcher([shell], [{ name: 'alice', tools: ['shellish'], trust: 'low' }], { guard });
    const result = await call(d, 'shellish', { command: 'rm -rf /' });
    expect(result).toEqual({
      status: 'refused',
      tool: 'shellish',
      error: {
        code: 'GuardDenied',
        message: 'denied by shell.rm.root: removes the root file system; remove a path inside the workspace',
        rule_id: 'shell.rm.root',
        suggestion: 'remove a path inside the workspace',
      },
    });
    expect(shell.runs).toHaveLength(0);
    expect(guard.calls).toEqual([{ kind: 'shell', args: { command: 'rm -rf /' }, trust: 'low' }]);
  });

  it('8. a warn verdict runs the tool and adds the warning to the result', async () => {
    const shell = shellTool();
    const d = makeDispatcher([shell], [{ name: 'alice', tools: ['shellish'] }], {
      guard: tableGuard({ 'git push': WARN }),
    });
    const result = await call(d, 'shellish', { command: 'git push' });
    expect(result).toEqual({
      status: 'ok',
      tool: 'shellish',
      value: { ran: 'git push' },
      warnings: ['shell.git.push: pushes to a remote (check the branch)'],
    });
    expect(shell.runs).toHaveLength(1);
  });

  it('8. a guard that throws fails closed', async () => {
    const shell = shellTool();
    const d = makeDispatcher([shell], [{ name: 'alice', tools: ['shellish'] }], {
      guard: () => {
        throw new Error('rule table corrupt');
      },
    });
    expect(await call(d, 'shellish', { command: 'ls' })).toMatchObject({
      status: 'refused',
      error: { code: 'GuardError' },
    });
    expect(shell.runs).toHaveLength(0);
  });

  it('passes trust (default medium) and tool_config to the guard and the tool', async () => {
    const echo = echoTool();
    const d = makeDispatcher(
      [echo],
      [{ name: 'alice', tools: ['echo'], tool_config: { echo: { allowed_paths: ['/data/**'] } } }],
    );
    await call(d, 'echo', { text: 'x' });
    expect(echo.runs[0]?.ctx.config).toEqual({ allowed_paths: ['/data/**'] });
    expect(echo.runs[0]?.ctx.trust).toBe('medium');
  });

  it('a guard deny comes before the rate limit, so denied calls do not spend tokens', async () => {
    const shell = shellTool();
    const d = makeDispatcher(
      [shell],
      [
        {
          name: 'alice',
          tools: ['shellish'],
          tool_config: { shellish: { rate_limit: { per_minute: 1, burst: 1 } } },
        },
      ],
      { guard: tableGuard({ bad: DENY }), now: () => 0 },
    );
    expect(await call(d, 'shellish', { command: 'bad' })).toMatchObject({ error: { code: 'GuardDenied' } });
    expect(await call(d, 'shellish', { command: 'good' })).toMatchObject({ status: 'ok' });
    expect(await call(d, 'shellish', { command: 'good2' })).toMatchObject({ error: { code: 'RateLimited' } });
  });

  it('audits every call, refused ones included, with the verdict and outcome', async () => {
    const audit = memoryAudit();
    const d = makeDispatcher([shellTool(), noopTool()], [{ name: 'alice', tools: ['shellish'] }], {
      audit,
      guard: tableGuard({ 'rm -rf /': { ...DENY, segment: 'rm -rf /' } }),
    });
    await call(d, 'shellish', { command: 'rm -rf /' });
    await call(d, 'noop', {});
    await call(d, 'shellish', { command: 'ls' });
    expect(
      audit.entries.map((e) => (e.type === 'call' ? [e.tool, e.outcome, e.code, e.verdict] : null)),
    ).toEqual([
      ['shellish', 'refused', 'GuardDenied', 'deny'],
      ['noop', 'refused', 'PermissionDenied', null],
      ['shellish', 'ok', null, 'allow'],
    ]);
    const first = audit.entries[0];
    expect(first).toMatchObject({
      type: 'call',
      thread: 't1',
      listener: 'alice',
      trust: 'medium',
      input: { command: 'rm -rf /' },
      segment: 'rm -rf /',
      rule_id: 'shell.rm.root',
      reason: 'removes the root file system',
      suggestion: 'remove a path inside the workspace',
    });
    expect(typeof (first as { duration_ms: number }).duration_ms).toBe('number');
  });

  it('never throws at the caller, even for garbage requests', async () => {
    const d = makeDispatcher([noopTool()], [{ name: 'alice', tools: ['noop'] }]);
    const weird = await d.call({ tool: 'noop', args: { f: () => 1 }, listener: 'alice', thread: 't' });
    expect(weird).toMatchObject({ status: 'refused', error: { code: 'InvalidArguments' } });
    const notObject = await d.call({ tool: 'noop', args: 'text', listener: 'alice', thread: 't' });
    expect(notObject).toMatchObject({ status: 'refused', error: { code: 'InvalidArguments' } });
  });
});

describe('availability', () => {
  it('lists every tool in registration order with the reason a listener cannot use it', () => {
    const d = makeDispatcher(
      [noopTool(), echoTool(), offlineTool(), webTool()],
      [{ name: 'researcher', tools: ['echo', 'offline', 'webby'] }],
      {
        revocations: { get: (t) => (t === 'webby' ? { reason: 'under review' } : undefined) },
      },
    );
    expect(d.availability('researcher').map((a) => [a.tool, a.available, a.reason])).toEqual([
      ['noop', false, 'not granted to researcher'],
      ['echo', true, undefined],
      ['offline', false, 'no smtp section in organism.yaml'],
      ['webby', false, 'revoked: under review'],
    ]);
  });
});
