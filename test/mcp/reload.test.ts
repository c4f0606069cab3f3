/** A reload keeps an MCP server whose config did not change (same process), and restarts one whose config did. */
import { readFile, writeFile } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { type Daemon, startDaemon } from '../../src/daemon.ts';
import { until } from '../../src/testing/index.ts';
import { RUG, tempOrganism } from './helpers.ts';

let daemon: Daemon | undefined;
afterAll(async () => {
  await daemon?.close(100);
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('MCP servers across a reload', () => {
  it('unchanged: the same server process serves on; changed: a new one, the old one stopped', async () => {
    const o = await tempOrganism(`mcp_servers:
  - name: rug
    command: /usr/bin/node
    args: [${JSON.stringify(RUG)}]
    capabilities: { greet: read }
listeners:
  - name: worker
    agent: true
    description: works
    tools: [rug.greet]
`);
    daemon = await startDaemon({ configPath: o.config, port: 0, host: '127.0.0.1', reloadOnSighup: false });
    const greet = () =>
      daemon!.tools.dispatcher.call({
        tool: 'rug.greet',
        args: { name: 'x' },
        listener: 'worker',
        thread: 't',
      });
    const first = daemon.tools.mcp!.pool.get('rug')!.pid!;
    expect(first).toBeGreaterThan(0);

    await daemon.reload('test');
    expect(daemon.tools.mcp!.pool.get('rug')!.pid).toBe(first);
    expect(await greet()).toMatchObject({ status: 'ok', value: { text: 'hello x' } });

    await writeFile(
      o.config,
      (await readFile(o.config, 'utf8')).replace('capabilities:', 'timeout_ms: 20000\n    capabilities:'),
    );
    await daemon.reload('test');
    const second = daemon.tools.mcp!.pool.get('rug')!.pid!;
    expect(second).toBeGreaterThan(0);
    expect(second).not.toBe(first);
    expect(await greet()).toMatchObject({ status: 'ok', value: { text: 'hello x' } });
    // The old server is stopped (its close kills the sandbox); give the kernel its moment.
    await until(() => !alive(first), { what: 'the old server to be gone', intervalMs: 50 });
  });
});
