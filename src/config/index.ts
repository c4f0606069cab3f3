/** organism.yaml: loading, validation and the generated reference. Internal API (not for listener authors). */
export { renderConfigReference } from './docs.ts';
export { type LoadConfigOptions, type LoadedListener, type LoadedOrganism, loadConfig } from './load.ts';
export { organismSchema, SCHEMA_PATH } from './schema.ts';
export type * from './types.ts';
