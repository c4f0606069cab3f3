/**
 * A consumed MCP server's life: list_changed relists, a changed description (rug pull) is refused
 * until signed again, a killed server is restarted with its tools unavailable meanwhile, a timeout
 * cancels the request on the server, a lazy server starts at its first call, a server that never
 * answers delays the start by startup_timeout_ms only, and annotations count only when tool_config
 * trusts the server.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readAuditLines } from '../../src/audit/read.ts';
import { captureIo } from '../../src/cli/io.ts';
import { main } from '../../src/cli/main.ts';
import type { ToolRuntime } from '../../src/tools/runtime.ts';
import { call, REPO, RUG, startRuntime, tempOrganism, until } from './helpers.ts';

let runtime: ToolRuntime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

const rugServer = (extra = '', restartMs = 100) => `mcp_servers:
  - name: rug
    command: /usr/bin/node
    args: [${JSON.stringify(RUG)}]
    restart_initial_ms: ${restartMs}
    capabilities: { greet: read, flip: write, die: write, slow: read, cancelled: read }
${extra}`;

function message(result: unknown): string {
  return (result as { error?: { message: string } }).error?.message ?? '';
}

describe('MCP server lifecycle and integrity', () => {
  it('a changed description (list_changed) is refused until the tools are signed again', async () => {
    const o = await tempOrganism(`${rugServer()}listeners:
  - name: worker
    agent: true
    description: works
    tools: [rug.greet, rug.flip]
`);
    const sign = async () => {
      const io = captureIo();
      const code = await main(['tools', 'sign', '--config', o.config], io);
      expect(code, io.stderr.join('\n')).toBe(0);
      return io.stdout.join('\n');
    };
    expect(await sign()).toMatch(/pinned \d+ tools of MCP server rug/);
    runtime = await startRuntime(o);
    expect(await call(runtime, 'worker', 'rug.greet', { name: 'ada' })).toMatchObject({ status: 'ok' });

    // The server changes greet's description and says so: the runtime lists again.
    expect(await call(runtime, 'worker', 'rug.flip')).toMatchObject({ status: 'ok' });
    // (Waited for on the connection's listing: the registry withholds the unsigned words.)
    await until(
      () => runtime!.mcp!.pool.get('rug')!.tools.get('greet')?.description.includes('id_rsa') === true,
      'the relisted description',
    );
    const refused = await call(runtime, 'worker', 'rug.greet', { name: 'ada' });
    expect(refused).toMatchObject({ status: 'refused', error: { code: 'IntegrityFailure' } });
    expect(message(refused)).toContain('changed since it was signed');
    const listed = runtime.dispatcher.availability('worker').find((a) => a.tool === 'rug.greet');
    expect(listed?.available).toBe(false);
    // Written to the audit log as a threat, once.
    await runtime.audit.flush();
    const threats = (await readAuditLines(join(o.dataDir, 'audit.jsonl')))
      .map((l) => JSON.parse(l))
      .filter((r) => r.type === 'threat');
    expect(threats).toHaveLength(1);
    expect(threats[0]).toMatchObject({ kind: 'integrity', tool: 'rug.greet' });

    // Signed again (someone read the new description and accepts it): usable again, no restart
    // needed (the manifest is looked at again within PIN_RECHECK_MS).
    expect(await sign()).toMatch(/pinned/);
    let again: unknown;
    await until(async () => {
      again = await call(runtime!, 'worker', 'rug.greet', { name: 'ada' });
      return (again as { status: string }).status === 'ok';
    }, 'the re-signed tool to be usable');
    expect(again).toMatchObject({ status: 'ok', value: { text: 'hello ada' } });
  });

  it('a killed server is restarted with backoff; meanwhile its tools are unavailable with why', async () => {
    const o = await tempOrganism(`${rugServer('', 2000)}listeners:
  - name: worker
    agent: true
    description: works
    tools: [rug.greet, rug.die]
`);
    runtime = await startRuntime(o);
    const connection = runtime.mcp!.pool.get('rug')!;
    expect(connection.starts).toBe(1);
    await call(runtime, 'worker', 'rug.die');
    // Restarted 2 s after it died: down long enough to be seen, whatever the machine's load.
    await until(() => connection.state === 'down', 'the server to be seen dead');
    const down = await call(runtime, 'worker', 'rug.greet', { name: 'x' });
    expect(down).toMatchObject({ status: 'refused', error: { code: 'ToolUnavailable' } });
    expect(message(down)).toMatch(/server rug is down: its process exited.*restarting in 2 s/);
    await until(() => connection.state === 'ready', 'the restart');
    expect(connection.starts).toBe(2);
    expect(await call(runtime, 'worker', 'rug.greet', { name: 'again' })).toMatchObject({
      status: 'ok',
      value: { text: 'hello again' },
    });
  });

  it('organism tools list --as marks the tools of a server that cannot start [UNAVAILABLE: why]', async () => {
    const o = await tempOrganism(`mcp_servers:
  - name: broken
    command: /bin/false
    capabilities: { thing: read }
listeners:
  - name: worker
    agent: true
    description: works
    tools: [broken.thing]
`);
    const io = captureIo();
    expect(await main(['tools', 'list', '--config', o.config, '--as', 'worker'], io)).toBe(0);
    const line = io.stdout.find((l) => l.startsWith('broken.thing'));
    expect(line).toMatch(
      /\[UNAVAILABLE: server broken is down: its process exited before it was ready; restarting in/,
    );
  });

  it('a server that never answers holds the start for startup_timeout_ms, not for its shutdown too', async () => {
    const o = await tempOrganism(`mcp_servers:
  - name: mute
    command: /bin/sleep
    args: ["300"]
    startup_timeout_ms: 1000
    capabilities: { thing: read }
listeners:
  - name: worker
    agent: true
    description: works
    tools: [mute.thing]
`);
    const warnings: string[] = [];
    const started = performance.now();
    runtime = await startRuntime(o, {}, warnings);
    const ms = performance.now() - started;
    expect(warnings.join('\n')).toMatch(/server mute is down: could not start: connecting took over 1000 ms/);
    // A process that ignores its stdin takes the SDK ~2 s and a SIGTERM, then ~2 s more and a
    // SIGKILL, to close: awaited, the start took ~5 s here.
    expect(ms).toBeLessThan(4_000);
  });

  it('a server run without a sandbox is warned about at every start', async () => {
    const o = await tempOrganism(`${rugServer('    sandbox: none\n')}listeners:
  - name: worker
    agent: true
    description: works
    tools: [rug.greet]
`);
    const warnings: string[] = [];
    runtime = await startRuntime(o, {}, warnings);
    expect(
      warnings.some((w) => /listener worker: rug\.greet .*runs without a sandbox \(sandbox: none\)/.test(w)),
    ).toBe(true);
  });

  it('a server whose tools/list pages without end is cut off after 100 pages; the runtime starts', async () => {
    const o = await tempOrganism(`mcp_servers:
  - name: endless
    command: /usr/bin/node
    args: [${JSON.stringify(join(REPO, 'test/mcp/fixtures/endless-server.mjs'))}]
    capabilities: { t0: read }
listeners:
  - name: worker
    agent: true
    description: works
    tools: [endless.t0]
`);
    runtime = await startRuntime(o);
    const listed = runtime.registry.names().filter((n) => n.startsWith('endless.'));
    expect(listed).toHaveLength(100);
    expect(await call(runtime, 'worker', 'endless.t0')).toMatchObject({
      status: 'ok',
      value: { text: 'called t0' },
    });
  });

  it('a timeout answers the agent and sends notifications/cancelled to the server', async () => {
    // The server's timeout_ms is its tools' time limit (tool_config.timeout_ms would win).
    const o = await tempOrganism(`${rugServer('    timeout_ms: 300\n')}listeners:
  - name: worker
    agent: true
    description: works
    tools: [rug.slow, rug.cancelled]
`);
    runtime = await startRuntime(o);
    const slow = await call(runtime, 'worker', 'rug.slow', { ms: 20_000 });
    expect(slow).toMatchObject({ status: 'error', error: { code: 'Timeout' } });
    await until(async () => {
      const r = await call(runtime!, 'worker', 'rug.cancelled');
      return (r as { value?: { cancelled?: number } }).value?.cancelled === 1;
    }, 'the server to note the cancellation');
  });

  it("the SDK's own timeout, should its timer fire before the dispatcher's, is a Timeout too", async () => {
    // In the full suite under load the SDK's timer (CANCEL_AFTER_MS after the dispatcher's) once
    // fired first and the agent was answered ToolError. Here it is the only timer: the tool is run
    // as the dispatcher would, without the dispatcher's timer.
    const o = await tempOrganism(`${rugServer()}listeners:
  - name: worker
    agent: true
    description: works
    tools: [rug.slow]
`);
    runtime = await startRuntime(o);
    const slow = runtime.registry.get('rug.slow')!;
    const ran = slow.run({ ms: 20_000 }, { timeoutMs: 50 } as never);
    await expect(ran).rejects.toMatchObject({
      code: 'Timeout',
      message: 'tool rug.slow timed out after 50 ms',
    });
  });

  it('a lazy server starts at the first call of one of its tools', async () => {
    const o = await tempOrganism(`${rugServer('    start: lazy\n')}listeners:
  - name: worker
    agent: true
    description: works
    tools: [rug.greet]
`);
    runtime = await startRuntime(o);
    const connection = runtime.mcp!.pool.get('rug')!;
    expect(connection.state).toBe('idle');
    expect(connection.starts).toBe(0);
    expect(await call(runtime, 'worker', 'rug.greet', { name: 'lazy' })).toMatchObject({
      status: 'ok',
      value: { text: 'hello lazy' },
    });
    expect(connection.starts).toBe(1);
    // Arguments are still checked against the schema it listed, before anything is sent.
    expect(await call(runtime, 'worker', 'rug.greet', { name: 5 })).toMatchObject({
      status: 'refused',
      error: { code: 'InvalidArguments' },
    });
  });

  it('annotations count only when tool_config trusts the server, and give read only', async () => {
    const o = await tempOrganism(`mcp_servers:
  - name: rug
    command: /usr/bin/node
    args: [${JSON.stringify(RUG)}]
listeners:
  - name: sceptic
    agent: true
    description: does not trust it
    tools: [rug.greet]
  - name: believer
    agent: true
    description: trusts it
    tools: [rug.greet, rug.read]
    tool_config:
      rug.greet: { trusted: true }
      rug.read: { trusted: true }
  - name: explicit
    agent: true
    description: names the capability
    tools: [rug.read]
    tool_config:
      rug.read: { capability: write }
`);
    runtime = await startRuntime(o);
    // greet says readOnlyHint: true. Untrusted, that counts for nothing: no capability, unavailable.
    const sceptic = await call(runtime, 'sceptic', 'rug.greet', { name: 'a' });
    expect(sceptic).toMatchObject({ status: 'refused', error: { code: 'ToolUnavailable' } });
    expect(message(sceptic)).toContain('needs a capability named explicitly');
    // Trusted, readOnlyHint gives read: allowed, also in a thread scoped to read.
    expect(await call(runtime, 'believer', 'rug.greet', { name: 'a' }, ['read'])).toMatchObject({
      status: 'ok',
    });
    // read has no annotations: even trusted, it needs a capability named explicitly.
    const unannotated = await call(runtime, 'believer', 'rug.read', { path: '/etc/hostname' });
    expect(message(unannotated)).toContain('needs a capability named explicitly');
    // Named explicitly (write): allowed unscoped, outside a read-only scope.
    expect(await call(runtime, 'explicit', 'rug.read', { path: '/etc/hostname' })).toMatchObject({
      status: 'ok',
    });
    expect(await call(runtime, 'explicit', 'rug.read', { path: '/etc/hostname' }, ['read'])).toMatchObject({
      status: 'refused',
      error: { code: 'OutsideScope' },
    });
  });
});
