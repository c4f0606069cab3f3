/** The SDK is not loaded by a daemon with no mcp_servers until POST /mcp is used (startup RSS). */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPO, tempOrganism } from './helpers.ts';

describe('lazy loading of the MCP SDK', () => {
  it('no SDK module at start or on other routes; loaded at the first POST /mcp', async () => {
    const o = await tempOrganism(`listeners:
  - name: upper
    handler: ${JSON.stringify(join(REPO, 'test/mcp/fixtures/upper.ts'))}
    mcp: true
`);
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [join(REPO, 'test/mcp/fixtures/sdk-probe.mjs'), o.config],
      {
        timeout: 60_000,
      },
    );
    const result = JSON.parse(stdout.trim().split('\n').pop() as string);
    expect(result.status).toBe(200);
    expect(result.atStart).toBe(0);
    expect(result.afterMcp).toBeGreaterThan(0);
  });
});
