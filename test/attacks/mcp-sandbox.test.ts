/**
 * Attack on the sandbox of a stdio MCP server (invariant 8): a server must never see the daemon's
 * data dir (audit log, signing key, stores), not even when organism.yaml names it, or a folder in
 * it, as the server's workspace. Such a server does not start; the reason names the setting.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ToolRuntime } from '../../src/tools/runtime.ts';
import { call, RUG, startRuntime, tempOrganism } from '../mcp/helpers.ts';

let runtime: ToolRuntime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

describe('a stdio MCP server whose workspace is a hidden folder', () => {
  for (const workspace of ['./data', './data/kv', './data/mcp', '.']) {
    it(`workspace: ${workspace} does not show it the data dir`, async () => {
      const o = await tempOrganism(`mcp_servers:
  - name: rug
    command: /usr/bin/node
    args: [${JSON.stringify(RUG)}]
    workspace: ${workspace}
    capabilities: { read: read, ls: read }
listeners:
  - name: worker
    agent: true
    description: works
    tools: [rug.read, rug.ls]
`);
      await mkdir(o.dataDir, { recursive: true });
      await writeFile(join(o.dataDir, 'secret.txt'), 'data-dir-secret');
      runtime = await startRuntime(o);
      const read = await call(runtime, 'worker', 'rug.read', { path: join(o.dataDir, 'secret.txt') });
      expect(JSON.stringify(read)).not.toContain('data-dir-secret');
      const listed = await call(runtime, 'worker', 'rug.ls', { path: o.dataDir });
      expect(JSON.stringify(listed)).not.toContain('secret.txt');
      // The data dir, or a folder in it not the servers' own: the server does not start, and says why.
      if (workspace !== '.') {
        expect(read.status).toBe('refused');
        expect(JSON.stringify(read)).toContain("is the daemon's data dir or a folder in it");
      } else expect(read.status).toBe('ok');
    }, 60_000);
  }
});
