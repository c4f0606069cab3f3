/**
 * The start-up warning for a Redis without a password that programs with the host's network can
 * reach (src/daemon/redis-exposure.ts): given exactly when both hold, naming who and what to do.
 */
import { describe, expect, it } from 'vitest';
import type { OrganismConfig } from '../../src/config/types.ts';
import { redisExposureWarning } from '../../src/daemon/redis-exposure.ts';

type Part = Parameters<typeof redisExposureWarning>[0];

function config(overrides: { bus?: string; kv?: string; runCommand?: object; mcp?: object[] }): Part {
  return {
    bus: overrides.bus ? { transport: 'redis', url: overrides.bus } : { transport: 'memory' },
    ...(overrides.kv ? { kv: { url: overrides.kv } } : {}),
    listeners: [
      {
        name: 'ops',
        tools: ['run_command'],
        tool_config: overrides.runCommand ? { run_command: overrides.runCommand } : {},
      },
    ],
    mcp_servers: overrides.mcp ?? [],
  } as unknown as Pick<OrganismConfig, 'listeners' | 'mcp_servers' | 'bus'>;
}

describe('redisExposureWarning', () => {
  it('warns for an open Redis that a networked program can reach, naming both and the remedy', () => {
    const warning = redisExposureWarning(
      config({ bus: 'redis://127.0.0.1:6379', runCommand: { network: true } }),
    );
    expect(warning).toContain('Redis 127.0.0.1:6379 has no password');
    expect(warning).toContain('listener ops (run_command network: true)');
    expect(warning).toContain('Give Redis a password');
  });

  it('names sandbox: none, stdio MCP servers with network, and a kv.url', () => {
    const warning = redisExposureWarning(
      config({
        kv: 'redis://10.0.0.5:6380/2',
        runCommand: { sandbox: 'none' },
        mcp: [
          { name: 'fs', command: 'node', network: true },
          { name: 'remote', url: 'http://127.0.0.1:9/mcp', network: true },
        ],
      }),
    );
    expect(warning).toContain('Redis 10.0.0.5:6380 has no password');
    expect(warning).toContain('listener ops (run_command sandbox: none)');
    expect(warning).toContain('MCP server fs (network: true)');
    expect(warning).not.toContain('remote');
  });

  it('is silent with a password, without Redis, or without networked programs', () => {
    expect(
      redisExposureWarning(config({ bus: 'redis://:s3cret@127.0.0.1:6379', runCommand: { network: true } })),
    ).toBeNull();
    expect(redisExposureWarning(config({ runCommand: { network: true } }))).toBeNull();
    expect(redisExposureWarning(config({ bus: 'redis://127.0.0.1:6379', runCommand: {} }))).toBeNull();
  });
});
