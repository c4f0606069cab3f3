/**
 * Consuming real MCP servers over stdio, inside the sandbox: @modelcontextprotocol/server-everything
 * and server-filesystem from npm, and the test's own rug-server. Every call goes through the
 * dispatcher exactly as a listener's would.
 */
import { copyFile, mkdir, symlink, writeFile } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ToolRuntime } from '../../src/tools/runtime.ts';
import { call, EVERYTHING, FILESYSTEM, REPO, RUG, startRuntime, tempOrganism, until } from './helpers.ts';

let runtime: ToolRuntime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
  delete process.env.DAEMON_SECRET_TOKEN;
});

describe('MCP servers over stdio', () => {
  it("a server in the user's project (the config's folder, covered in the sandbox) starts with its node_modules", async () => {
    // The project is organism.yaml's folder (under /tmp here, private inside the sandbox as well):
    // servers/rug.mjs imports the SDK from the project's node_modules (a link to this repo's).
    const o = await tempOrganism(`mcp_servers:
  - name: mine
    command: /usr/bin/node
    args: [./servers/rug.mjs]
    capabilities: { greet: read }
listeners:
  - name: worker
    agent: true
    description: works
    tools: [mine.greet]
`);
    await mkdir(join(o.dir, 'servers'));
    await copyFile(RUG, join(o.dir, 'servers', 'rug.mjs'));
    await symlink(join(REPO, 'node_modules'), join(o.dir, 'node_modules'));
    await writeFile(join(o.dir, '.env'), 'PROJECT_SECRET=in-the-dotenv\n');
    runtime = await startRuntime(o);
    const ok = await call(runtime, 'worker', 'mine.greet', { name: 'Ada' });
    expect(ok).toMatchObject({ status: 'ok' });
    expect(JSON.stringify(ok)).toContain('Ada');
  });

  it('a listener granted one tool of a server can call it and no other', async () => {
    const o = await tempOrganism(`mcp_servers:
  - name: every
    command: /usr/bin/node
    args: [${JSON.stringify(EVERYTHING)}, stdio]
    capabilities: { echo: read, get-sum: read }
listeners:
  - name: worker
    agent: true
    description: works
    tools: [every.echo]
`);
    runtime = await startRuntime(o);
    const ok = await call(runtime, 'worker', 'every.echo', { message: 'hi there' });
    expect(ok).toMatchObject({ status: 'ok', value: { text: 'Echo: hi there' } });
    expect(runtime.registry.get('every.echo')?.definition.source).toBe('external');
    // The server offers get-sum too; registered, but this listener was not granted it.
    expect(runtime.registry.has('every.get-sum')).toBe(true);
    const denied = await call(runtime, 'worker', 'every.get-sum', { a: 1, b: 2 });
    expect(denied).toMatchObject({ status: 'refused', error: { code: 'PermissionDenied' } });
  });

  it('server-everything: arguments its schema refuses are refused before they are sent; killed, it is restarted', async () => {
    const o = await tempOrganism(`mcp_servers:
  - name: every
    command: /usr/bin/node
    args: [${JSON.stringify(EVERYTHING)}, stdio]
    capabilities: { get-sum: read }
    restart_initial_ms: 100
listeners:
  - name: worker
    agent: true
    description: works
    tools: [every.get-sum]
`);
    runtime = await startRuntime(o);
    // Sent, the server itself would answer with an error (status 'error'); refused here, it never is.
    const bad = await call(runtime, 'worker', 'every.get-sum', { a: 'one', b: 2 });
    expect(bad).toMatchObject({ status: 'refused', error: { code: 'InvalidArguments' } });
    expect((bad as { error: { message: string } }).error.message).toContain('a');
    expect(await call(runtime, 'worker', 'every.get-sum', { a: 1, b: 2 })).toMatchObject({
      status: 'ok',
      value: { text: 'The sum of 1 and 2 is 3.' },
    });

    const connection = runtime.mcp!.pool.get('every')!;
    const pid = connection.pid;
    expect(pid).toBeGreaterThan(0);
    process.kill(pid!, 'SIGKILL');
    // starts counts every (re)start: 2 once it is back, however short it was down.
    await until(() => connection.starts === 2 && connection.state === 'ready', 'the restarted server');
    expect(connection.pid).not.toBe(pid);
    expect(await call(runtime, 'worker', 'every.get-sum', { a: 2, b: 2 })).toMatchObject({
      status: 'ok',
      value: { text: 'The sum of 2 and 2 is 4.' },
    });
  });

  it('arguments the server schema refuses never reach the server', async () => {
    const o = await tempOrganism(`mcp_servers:
  - name: rug
    command: /usr/bin/node
    args: [${JSON.stringify(RUG)}]
    capabilities: { greet: read, slow: read, cancelled: read }
listeners:
  - name: worker
    agent: true
    description: works
    tools: [rug.greet]
`);
    runtime = await startRuntime(o);
    const bad = await call(runtime, 'worker', 'rug.greet', { name: 'x'.repeat(41) });
    expect(bad).toMatchObject({ status: 'refused', error: { code: 'InvalidArguments' } });
    expect((bad as { error: { message: string } }).error.message).toContain('name');
    const wrongType = await call(runtime, 'worker', 'rug.greet', { name: 7 });
    expect(wrongType).toMatchObject({ status: 'refused', error: { code: 'InvalidArguments' } });
    expect(await call(runtime, 'worker', 'rug.greet', { name: 'ada' })).toMatchObject({
      status: 'ok',
      value: { text: 'hello ada' },
    });
  });

  it("the server's environment holds only what was configured (everything's get-env)", async () => {
    const o = await tempOrganism(`mcp_servers:
  - name: every
    command: /usr/bin/node
    args: [${JSON.stringify(EVERYTHING)}, stdio]
    env: { GREETING_env: MCP_TEST_GREETING }
    capabilities: { get-env: read }
listeners:
  - name: worker
    agent: true
    description: works
    tools: [every.get-env]
`);
    runtime = await startRuntime(o, {
      MCP_TEST_GREETING: 'bonjour',
      DAEMON_SECRET_TOKEN: 'sk-do-not-leak-1234567890',
    });
    const result = await call(runtime, 'worker', 'every.get-env');
    expect(result.status).toBe('ok');
    const env = JSON.parse((result as { value: { text: string } }).value.text) as Record<string, string>;
    expect(env.GREETING).toBe('bonjour');
    // PWD is the sandbox's working directory (the server's own workspace), set by the shell-less start.
    expect(Object.keys(env).sort()).toEqual(['GREETING', 'HOME', 'LANG', 'PATH', 'PWD']);
    expect(env.PWD).toBe(join(o.dataDir, 'mcp', 'every'));
    expect(JSON.stringify(env)).not.toContain('sk-do-not-leak');
  });

  it("a stdio server cannot read the daemon's data dir, config or environment", async () => {
    const o = await tempOrganism(`mcp_servers:
  - name: rug
    command: /usr/bin/node
    args: [${JSON.stringify(RUG)}]
    capabilities: { read: read, ls: read, env: read }
listeners:
  - name: worker
    agent: true
    description: works
    tools: [rug.read, rug.ls, rug.env]
`);
    await mkdir(o.dataDir, { recursive: true });
    await writeFile(join(o.dataDir, 'secret.txt'), 'data-dir-secret');
    await writeFile(join(o.dir, '.env'), 'DOTENV_SECRET=dotenv-secret-value\n');
    // In the daemon's own process environment too, where a server started unconfined would find it.
    process.env.DAEMON_SECRET_TOKEN = 'sk-do-not-leak-1234567890';
    runtime = await startRuntime(o, { DAEMON_SECRET_TOKEN: 'sk-do-not-leak-1234567890' });
    const text = async (tool: string, args: unknown) =>
      ((await call(runtime!, 'worker', tool, args)) as { value: { text: string } }).value.text;
    expect(await text('rug.read', { path: join(o.dataDir, 'secret.txt') })).toMatch(/^ERR /);
    // The data dir is covered: only the way down to the server's own workspace shows.
    expect(await text('rug.ls', { path: o.dataDir })).toBe('["mcp"]');
    expect(await text('rug.ls', { path: join(o.dataDir, 'mcp') })).toBe('["rug"]');
    // Covered (or, under /tmp, not there at all: the sandbox has a /tmp of its own).
    expect(await text('rug.read', { path: o.config })).not.toContain('mcp_servers');
    expect(await text('rug.read', { path: join(o.dir, '.env') })).not.toContain('dotenv-secret-value');
    // The daemon's own environment is out of reach too: /proc shows only the sandbox's processes.
    expect(await text('rug.read', { path: `/proc/${process.pid}/environ` })).not.toContain('sk-do-not-leak');
    const env = (await call(runtime, 'worker', 'rug.env')) as {
      status: string;
      value: { env: Record<string, string> };
    };
    expect(env.status).toBe('ok');
    expect(Object.keys(env.value.env).sort()).toEqual(['HOME', 'LANG', 'PATH', 'PWD']);
    expect(JSON.stringify(env.value)).not.toContain('sk-do-not-leak');
    // Its own workspace is where it runs and may write.
    expect(await text('rug.ls', { path: join(o.dataDir, 'mcp', 'rug') })).toBe('[]');
  });

  it('a stdio server has no network unless network: true (it cannot reach the daemon on loopback)', async () => {
    const listener = createServer((socket) => socket.end());
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const { port } = listener.address() as AddressInfo;
    try {
      const organism = (network: boolean) =>
        tempOrganism(`mcp_servers:
  - name: rug
    command: /usr/bin/node
    args: [${JSON.stringify(RUG)}]
    network: ${network}
    capabilities: { connect: read }
listeners:
  - name: worker
    agent: true
    description: works
    tools: [rug.connect]
`);
      runtime = await startRuntime(await organism(false));
      expect(await call(runtime, 'worker', 'rug.connect', { port })).toMatchObject({
        status: 'ok',
        value: { text: 'ERR ECONNREFUSED' },
      });
      await runtime.close();
      runtime = await startRuntime(await organism(true));
      expect(await call(runtime, 'worker', 'rug.connect', { port })).toMatchObject({
        status: 'ok',
        value: { text: 'connected' },
      });
    } finally {
      listener.close();
    }
  });

  it('server-filesystem: a read in its folder works; a guard denial stops a path outside the workspace', async () => {
    const o = await tempOrganism(`mcp_servers:
  - name: fs
    command: /usr/bin/node
    args: [${JSON.stringify(FILESYSTEM)}, .]
    workspace: ./workspace
    capabilities: { read_text_file: read, write_file: write }
    guards: { read_text_file: file, write_file: file }
listeners:
  - name: reader
    agent: true
    description: reads
    tools: [fs.read_text_file, fs.write_file]
`);
    await mkdir(o.workspace, { recursive: true });
    await writeFile(join(o.workspace, 'notes.txt'), 'remember the milk');
    runtime = await startRuntime(o);
    const read = await call(runtime, 'reader', 'fs.read_text_file', { path: join(o.workspace, 'notes.txt') });
    // server-filesystem answers with structuredContent, which is the result as the server gives it.
    expect(read).toMatchObject({ status: 'ok', value: { content: 'remember the milk' } });
    const outside = await call(runtime, 'reader', 'fs.read_text_file', { path: '/etc/passwd' });
    expect(outside).toMatchObject({ status: 'refused', error: { code: 'GuardDenied' } });
    expect((outside as { error: { rule_id: string } }).error.rule_id).toMatch(/^file\./);
    // A thread scoped to read only cannot write through it.
    const scoped = await call(
      runtime,
      'reader',
      'fs.write_file',
      { path: join(o.workspace, 'x.txt'), content: 'x' },
      ['read'],
    );
    expect(scoped).toMatchObject({ status: 'refused', error: { code: 'OutsideScope' } });
  });
});
