/** The runtime's own state (approvals, once-only effects): apart from what tools reach, sealed. */
export { isRuntimeStateName, RUNTIME_STATE_NAMES } from './names.ts';
export {
  createRuntimeState,
  describeStateLocation,
  runtimeStateFor,
  STATE_FOLDER,
  STATE_RESOURCE_KEY,
  type StateConfig,
  stateLocation,
} from './open.ts';
export { type Opened, type SealedRecord, type StateKeys, StateSeal } from './seal.ts';
export {
  RuntimeState,
  type RuntimeStateOptions,
  type StateRead,
  type StateThreat,
  stateThreatRecord,
} from './store.ts';
