import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.ts';
import { FIXTURES, fixture } from './helpers.ts';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

describe('loadConfig on valid files', () => {
  it('loads the shipped organism.yaml with its listener modules', async () => {
    const { config, listeners } = await loadConfig(resolve(REPO, 'organism.yaml'), { env: {} });
    expect(config.organism.name).toBe('hello-world');
    // The hello-world chain comes first; more listeners (toolbox, agents) may follow.
    expect(listeners.slice(0, 3).map((l) => [l.config.name, l.tag])).toEqual([
      ['greeter', 'greeting'],
      ['shouter', 'shout'],
      ['printer', 'print'],
    ]);
    for (const l of listeners.filter((l) => l.config.handler)) {
      expect(l.definition?.payload.tag).toBe(l.tag);
      expect(l.config.handler).toBe(resolve(REPO, 'listeners', `${l.config.name}.ts`));
    }
  });

  it("applies every default and resolves paths against the file's folder", async () => {
    const { config, listeners } = await loadConfig(fixture('minimal.yaml'), { env: {} });
    expect(config.file).toBe(resolve(FIXTURES, 'minimal.yaml'));
    expect(config.organism).toEqual({
      name: 'minimal',
      data_dir: resolve(FIXTURES, '.organism'),
      workspace: resolve(FIXTURES, '.organism/workspace'),
      workspace_max_bytes: 1073741824,
      optimize_for: 'memory',
      log_level: 'info',
    });
    expect(config.server).toEqual({
      host: '127.0.0.1',
      port: 7777,
      inject_per_second: 200,
      inject_burst: 400,
      dashboard: true,
    });
    expect(config.limits).toEqual({
      max_message_bytes: 1048576,
      max_xml_depth: 64,
      max_xml_elements: 10000,
      max_attributes: 64,
      max_text_length: 1048576,
      max_thread_hops: 1000,
      max_call_depth: 100,
      handler_timeout_ms: 30000,
      max_history_per_thread: 1000,
      thread_idle_ms: 600000,
    });
    expect(config.bus).toEqual({
      transport: 'memory',
      group: 'minimal',
      queue_length: 1000,
      max_concurrent: 16,
      drain_timeout_ms: 10000,
      max_deliveries: 5,
      heartbeat_ms: 1000,
      partitions: 1,
    });
    expect(config.tools).toEqual({
      revocations_file: resolve(FIXTURES, '.organism/revocations.json'),
      manifest: resolve(FIXTURES, 'tools.manifest.json'),
    });
    expect(config.audit).toEqual({
      path: resolve(FIXTURES, '.organism/audit.jsonl'),
      key_env: 'ORGANISM_AUDIT_KEY',
      checkpoint_every: 1000,
      checkpoint_interval_ms: 5000,
      on_change: 'refuse',
    });
    expect(config.kv).toEqual({});
    expect(config.smtp).toBeUndefined();
    expect(config.web_search).toBeUndefined();
    expect(config.librarian).toEqual({ backend: 'embedded', default_collection: '/db/organism' });
    expect(config.llm).toEqual({ strategy: 'failover', retries: 3, backends: [] });
    expect(config.auth).toEqual({ tokens: [] });
    expect(config.history).toEqual({ max_threads: 10000, max_bytes: 268435456 });

    const [echo, helper] = listeners;
    expect(echo!.config).toEqual({
      name: 'echo',
      description: 'Echoes text back to the caller.', // from the module
      handler: resolve(FIXTURES, 'listeners/echo.ts'),
      agent: false,
      peers: [],
      broadcast: false,
      tools: [],
      tool_config: {},
      trust: 'medium',
      max_turns: 10,
      mcp: false,
    });
    expect(echo!.tag).toBe('echo');
    expect(echo!.definition?.description).toBe('Echoes text back to the caller.');
    expect(helper!.tag).toBe('helper'); // an agent without a module is routed by its name
    expect(helper!.definition).toBeUndefined();
    expect(helper!.config.description).toBe('An agent with no handler module.');
  });

  it('accepts a file that sets every section, keeping explicit values', async () => {
    const { config, listeners } = await loadConfig(fixture('full.yaml'), { env: {} });
    expect(config.organism.data_dir).toBe(resolve(FIXTURES, 'state'));
    expect(config.organism.workspace).toBe('/tmp/organism-full-workspace');
    expect(config.bus.group).toBe('full-group');
    expect(config.tools.revocations_file).toBe(resolve(FIXTURES, 'state/revoked.json'));
    expect(config.audit.path).toBe(resolve(FIXTURES, 'audit/log.jsonl'));
    expect(config.smtp).toEqual({
      host: '127.0.0.1',
      port: 2525,
      secure: false,
      user: 'mailer',
      password_env: 'SMTP_PASSWORD',
      from: 'organism@example.org',
    });
    expect(config.llm.backends[2]!.script).toBe(resolve(FIXTURES, 'scripts/demo.json'));
    const echo = listeners[0]!;
    expect(echo.tag).toBe('echo-request'); // the yaml payload override wins over the module's tag
    expect(echo.config.description).toBe("Echo, overriding the module's description.");
    expect(echo.config.tool_config.fetch_url).toEqual({
      rate_limit: { per_minute: 10, burst: 2 },
      timeout_ms: 5000,
      max_result_bytes: 2048,
      allowed_domains: ['example.org'],
      approval: 'never',
      approval_timeout_ms: 600_000,
      approval_role: 'operator',
      approval_max_pending: 20,
      approval_elicitation: true,
    });
    expect(listeners[1]!.config).toMatchObject({ agent: true, max_turns: 3, budget: { tokens: 5000 } });
  });

  it('fills max_result_bytes and the approval keys in each tool_config entry that lacks them', async () => {
    const { listeners } = await loadConfig(fixture('full.yaml'), { env: {}, loadModules: false });
    expect(listeners[0]!.config.tool_config.calculate).toEqual({
      timeout_ms: 100,
      max_result_bytes: 102400,
      approval: 'never',
      approval_timeout_ms: 600_000,
      approval_role: 'operator',
      approval_max_pending: 20,
      approval_elicitation: true,
    });
    expect(listeners[0]!.config.tool_config.fetch_url!.max_result_bytes).toBe(2048);
    const { config } = await loadConfig(fixture('broadcast.yaml'), { env: {} });
    expect(config.listeners.map((l) => l.broadcast)).toEqual([true, true]);
  });

  it('with loadModules: false reads only the file', async () => {
    const { listeners } = await loadConfig(fixture('minimal.yaml'), { env: {}, loadModules: false });
    expect(listeners[0]!.definition).toBeUndefined();
    expect(listeners[0]!.tag).toBe(''); // unknown without the module
    expect(listeners[1]!.tag).toBe('helper');
    // A module that would not load is not looked at.
    await expect(
      loadConfig(fixture('bad-modules.yaml'), { env: {}, loadModules: false }),
    ).resolves.toBeDefined();
  });
});
