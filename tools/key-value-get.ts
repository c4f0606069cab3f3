/**
 * key_value_get: reads one value from the organism's key/value store (Redis or the embedded store,
 * whichever organism.yaml configures). Read-only.
 */
import type { ToolDefinition } from '../src/tools/types.ts';
import { KEY_ARGS, kvConfigSchema, kvStore, resolveNamespace } from './lib/kv-common.ts';

export interface KeyValueGetArgs {
  key: string;
  namespace?: string;
}

export interface KeyValueGetResult {
  found: boolean;
  /** The stored JSON value; null when not found (a stored null has found: true). */
  value: unknown;
}

const keyValueGet: ToolDefinition<KeyValueGetArgs, KeyValueGetResult> = {
  name: 'key_value_get',
  description:
    'Read a value you stored earlier with key_value_set. Returns {found, value}: found is false (and value null) ' +
    'when the key was never set, was deleted, or its ttl ran out. Values are JSON (string, number, boolean, null, ' +
    'array or object). Keys live in your own namespace unless you name another one you are allowed to use.',
  args: KEY_ARGS,
  readOnly: true,
  capability: 'db_read',
  source: 'native',
  config: kvConfigSchema(),
  async run(args, ctx) {
    const namespace = resolveNamespace(args.namespace, ctx, 'key_value_get');
    const store = await kvStore(ctx);
    const value = await store.get(namespace, args.key);
    return value === undefined ? { found: false, value: null } : { found: true, value };
  },
};

export default keyValueGet;
