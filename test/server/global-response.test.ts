/**
 * The daemon's HTTP server leaves the platform's Request and Response on globalThis. Its adapter
 * replaces them by default, after which no response from fetch() is an `instanceof Response` in
 * the daemon's process: the MCP SDK's OAuth client then read an authorization server's refusal
 * (`invalid_client`) as "Invalid OAuth error response ... [object Response]" (it showed in
 * test/mcp/client-oauth.test.ts whenever a file that started the server ran before it in the same
 * worker). Run in a process of its own, so no other file's server has been there first.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const CHILD = fileURLToPath(new URL('./support/global-response-child.ts', import.meta.url));

it('keeps a response from fetch() an instanceof Response once the server listens', async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d));
  child.stderr.on('data', (d: Buffer) => (err += d));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  expect(code, err).toBe(0);
  expect(JSON.parse(out)).toEqual({ status: 200, instance: true });
});
