/** The tool runtime: registry, catalog, dispatcher, integrity and revocation. Internal API. */
export {
  type CatalogEntry,
  loadNativeTools,
  loadToolCatalog,
  PACKAGE_ROOT,
  toolModuleFiles,
} from './catalog.ts';
export {
  type Availability,
  type CallRequest,
  Dispatcher,
  type DispatcherDefaults,
  type DispatcherOptions,
  defaultDispatcherDefaults,
  type GuardCheck,
} from './dispatcher.ts';
export {
  buildManifest,
  ensureSigningKey,
  IntegrityChecker,
  type Manifest,
  writeManifest,
} from './integrity.ts';
export { type ToolPaths, toolPaths } from './own-files.ts';
export { type RegisteredTool, ToolRegistry } from './registry.ts';
export {
  RevocationWatcher,
  readRevocations,
  revokeTool,
  unrevokeTool,
  writeRevocations,
} from './revocations.ts';
export {
  createToolRuntime,
  defaultToolRuntimeOptions,
  type ToolRuntime,
  type ToolRuntimeOptions,
  trustedPublicKey,
} from './runtime.ts';
export { createToolServices, Resources } from './services.ts';
export type * from './types.ts';
export { CAPABILITIES } from './types.ts';
