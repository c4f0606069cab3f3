/**
 * The names the runtime keeps its own state under (src/state). No listener and no key_value_*
 * namespace may take one (`organism validate` refuses them, the kv tools too): the state no longer
 * lives where tools reach, but a listener called `approvals` would also pass for the approvals'
 * own sender in the thread history. A leaf module: config checks and tools read it.
 */
export const RUNTIME_STATE_NAMES: readonly string[] = ['approvals', 'effects'];

export function isRuntimeStateName(name: string): boolean {
  return RUNTIME_STATE_NAMES.includes(name);
}
