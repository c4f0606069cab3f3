/**
 * key_value_set: stores one JSON value in the organism's key/value store, optionally with a ttl.
 * The call returns only once the value is durable (embedded: fsynced; Redis: acknowledged).
 */
import { KvError } from '../src/errors.ts';
import type { ToolConfig, ToolDefinition } from '../src/tools/types.ts';
import { KEY_ARG, kvConfigSchema, kvStore, NAMESPACE_ARG, resolveNamespace } from './lib/kv-common.ts';

export interface KeyValueSetArgs {
  key: string;
  value: unknown;
  namespace?: string;
  ttl?: number;
}

export interface KeyValueSetResult {
  ok: true;
}

/** Default and ceiling of tool_config.max_value_bytes (the store itself refuses above 16 MiB). */
export const KV_SET_DEFAULTS = { max_value_bytes: 1024 * 1024 } as const;
const MAX_VALUE_BYTES_CEILING = 16 * 1024 * 1024;

function maxValueBytes(config: ToolConfig): number {
  const limit = config.max_value_bytes ?? KV_SET_DEFAULTS.max_value_bytes;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_VALUE_BYTES_CEILING) {
    throw new KvError(
      'kv.invalid_value',
      `tool_config.key_value_set.max_value_bytes must be a whole number from 1 to ${MAX_VALUE_BYTES_CEILING}`,
    );
  }
  return limit;
}

const keyValueSet: ToolDefinition<KeyValueSetArgs, KeyValueSetResult> = {
  name: 'key_value_set',
  description:
    'Remember a value under a key so you (or a later call) can read it back with key_value_get, even after the ' +
    'organism restarts. The value can be any JSON: string, number, boolean, null, array or object; setting an ' +
    'existing key replaces its value. Give ttl (seconds) to have the key expire by itself. Returns {ok: true} ' +
    'once the value is safely stored. Keys live in your own namespace unless you name another one you are allowed to use.',
  args: {
    type: 'object',
    properties: {
      key: KEY_ARG,
      value: { description: 'Any JSON value to store (string, number, boolean, null, array or object).' },
      namespace: NAMESPACE_ARG,
      ttl: {
        type: 'integer',
        minimum: 1,
        maximum: 10 * 365 * 24 * 3600,
        description:
          'Optional. Seconds until the key expires by itself; without it the key stays until deleted.',
      },
    },
    required: ['key', 'value'],
    additionalProperties: false,
  },
  readOnly: false,
  capability: 'db_write',
  source: 'native',
  sideEffect: true,
  config: kvConfigSchema({
    max_value_bytes: {
      type: 'integer',
      minimum: 1,
      maximum: MAX_VALUE_BYTES_CEILING,
      default: KV_SET_DEFAULTS.max_value_bytes,
      description: 'Largest value this listener may store, in bytes of its JSON text.',
    },
  }),
  async run(args, ctx) {
    const namespace = resolveNamespace(args.namespace, ctx, 'key_value_set');
    const limit = maxValueBytes(ctx.config);
    const bytes = Buffer.byteLength(JSON.stringify(args.value) ?? '', 'utf8');
    if (bytes > limit) {
      throw new KvError(
        'kv.value_too_large',
        `value is ${bytes} bytes as JSON; tool_config.key_value_set.max_value_bytes allows ${limit}`,
        { bytes, limit },
      );
    }
    const store = await kvStore(ctx);
    await store.set(namespace, args.key, args.value, args.ttl);
    return { ok: true };
  },
};

export default keyValueSet;
