/**
 * What the three key_value_* tools share: the argument and tool_config schemas, the namespace
 * rule, and reaching the organism's one kv store. A listener's own name is its namespace; any other
 * namespace must be listed in that tool's tool_config `allowed_namespaces` (`*` for all), so one
 * agent cannot read or overwrite another's state by naming it. The runtime's own names (approvals,
 * effects) are refused whatever the config says.
 */
import { KvError } from '../../src/errors.ts';
import { KEY_MAX_CHARS, type KvStore, NAMESPACE_MAX_CHARS, sharedKvStore } from '../../src/kv/index.ts';
import { isRuntimeStateName } from '../../src/state/names.ts';
import type { ToolRunContext } from '../../src/tools/types.ts';
import type { JsonSchema } from '../../src/xml/json-schema.ts';

export const KEY_ARG: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: KEY_MAX_CHARS,
  description: `The key, 1 to ${KEY_MAX_CHARS} characters, no control characters (e.g. "last_summary").`,
};

export const NAMESPACE_ARG: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: NAMESPACE_MAX_CHARS,
  description:
    'Optional. Whose keys to use; defaults to your own namespace (your listener name). Other namespaces work only when your tool_config allows them.',
};

export const ALLOWED_NAMESPACES_CONFIG: JsonSchema = {
  type: 'array',
  items: { type: 'string', minLength: 1 },
  default: [],
  description: 'Namespaces besides its own this listener may use ("*" for any). Default: only its own.',
};

/** The arguments of key_value_get and key_value_delete: a key, and optionally whose namespace. */
export const KEY_ARGS: JsonSchema = {
  type: 'object',
  properties: { key: KEY_ARG, namespace: NAMESPACE_ARG },
  required: ['key'],
  additionalProperties: false,
};

/** A key_value_* tool's tool_config schema: allowed_namespaces, then any keys of the tool's own. */
export function kvConfigSchema(own: Record<string, JsonSchema> = {}): JsonSchema {
  return { type: 'object', properties: { allowed_namespaces: ALLOWED_NAMESPACES_CONFIG, ...own } };
}

/** The namespace this call uses, or a kv.namespace_denied refusal that says how to allow it. */
export function resolveNamespace(requested: string | undefined, ctx: ToolRunContext, tool: string): string {
  const own = ctx.listener;
  if (requested === undefined || requested === own) return own;
  // The runtime's own state lives elsewhere (src/state), not here; its names stay clear of tools' data.
  if (isRuntimeStateName(requested)) {
    throw new KvError(
      'kv.namespace_denied',
      `namespace ${JSON.stringify(requested)} is a name of the runtime's own state, which no tool can use; pick another namespace`,
      { namespace: requested, listener: own },
    );
  }
  const allowed = ctx.config.allowed_namespaces ?? [];
  if (!Array.isArray(allowed) || !allowed.every((a) => typeof a === 'string')) {
    throw new KvError(
      'kv.namespace_denied',
      `tool_config.${tool}.allowed_namespaces must be a list of namespaces`,
    );
  }
  if (allowed.includes('*') || allowed.includes(requested)) return requested;
  throw new KvError(
    'kv.namespace_denied',
    `namespace ${JSON.stringify(requested)} is not allowed for ${own}; use your own namespace ${JSON.stringify(own)} ` +
      `(leave namespace out) or list it in tool_config.${tool}.allowed_namespaces`,
    { namespace: requested, listener: own },
  );
}

/** The organism's shared store; the runtime closes it at shutdown. */
export function kvStore(ctx: ToolRunContext): Promise<KvStore> {
  ctx.signal.throwIfAborted();
  return sharedKvStore(ctx.services);
}
