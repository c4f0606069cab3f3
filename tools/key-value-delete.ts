/**
 * key_value_delete: removes one key from the organism's key/value store.
 */
import type { ToolDefinition } from '../src/tools/types.ts';
import { KEY_ARGS, kvConfigSchema, kvStore, resolveNamespace } from './lib/kv-common.ts';

export interface KeyValueDeleteArgs {
  key: string;
  namespace?: string;
}

export interface KeyValueDeleteResult {
  /** False when there was nothing to delete (never set, already deleted, or expired). */
  deleted: boolean;
}

const keyValueDelete: ToolDefinition<KeyValueDeleteArgs, KeyValueDeleteResult> = {
  name: 'key_value_delete',
  description:
    'Delete a key you stored with key_value_set. Returns {deleted}: true when the key existed and is now gone, ' +
    'false when there was nothing to delete. Works in your own namespace unless you name another one you are ' +
    'allowed to use.',
  args: KEY_ARGS,
  readOnly: false,
  capability: 'db_write',
  source: 'native',
  sideEffect: true,
  config: kvConfigSchema(),
  async run(args, ctx) {
    const namespace = resolveNamespace(args.namespace, ctx, 'key_value_delete');
    const store = await kvStore(ctx);
    return { deleted: await store.delete(namespace, args.key) };
  },
};

export default keyValueDelete;
