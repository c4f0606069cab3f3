/** Fallback defaults in code come from organism.schema.json, so they cannot disagree with it. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_AUDIT_KEY_ENV } from '../../src/audit/key.ts';
import { DEFAULT_HEARTBEAT_MS, defaultRedisBusOptions } from '../../src/bus/transport/redis/options.ts';
import { organismSchema, schemaDefault } from '../../src/config/schema.ts';
import { ConfigError } from '../../src/errors.ts';
import { defaultDispatcherDefaults } from '../../src/tools/dispatcher-options.ts';

const props = (node: any, key: string) => node.properties[key];

describe('schemaDefault', () => {
  it('reads a default through mappings, list items and any-key mappings', () => {
    const bus = props(organismSchema, 'bus');
    expect(schemaDefault('bus.heartbeat_ms')).toBe(props(bus, 'heartbeat_ms').default);
    const listener = props(organismSchema, 'listeners').items;
    expect(schemaDefault('listeners[].trust')).toBe(props(listener, 'trust').default);
    const toolConfig = props(listener, 'tool_config').additionalProperties;
    expect(schemaDefault('listeners[].tool_config.*.max_result_bytes')).toBe(
      props(toolConfig, 'max_result_bytes').default,
    );
  });

  it('refuses a path the schema gives no scalar default for, naming it', () => {
    for (const path of ['bus.no_such_key', 'bus', 'listeners[].name']) {
      let error: unknown;
      try {
        schemaDefault(path);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).issues[0]).toMatchObject({ path });
    }
  });

  it('is what the runtime falls back on when built without a loaded config', () => {
    const dispatcher = defaultDispatcherDefaults();
    expect(dispatcher.maxResultBytes).toBe(schemaDefault('listeners[].tool_config.*.max_result_bytes'));
    expect(dispatcher.trust).toBe(schemaDefault('listeners[].trust'));
    expect(DEFAULT_HEARTBEAT_MS).toBe(schemaDefault('bus.heartbeat_ms'));
    const redis = defaultRedisBusOptions({ url: 'redis://127.0.0.1:6379', group: 'g' });
    expect(redis.maxDeliveries).toBe(schemaDefault('bus.max_deliveries'));
    expect(redis.heartbeatMs).toBe(schemaDefault('bus.heartbeat_ms'));
    expect(DEFAULT_AUDIT_KEY_ENV).toBe(schemaDefault('audit.key_env'));
  });
});
