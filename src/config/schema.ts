/**
 * organism.schema.json, read once. The loader, the validator and the README reference all read this
 * one object, so they cannot drift apart.
 */
import { readFileSync } from 'node:fs';
import { ConfigError } from '../errors.ts';
import { packageFile } from '../package-root.ts';
import type { JsonSchema } from '../xml/json-schema.ts';

/** Absolute path of the shipped schema (package root, next to package.json, from source and from dist/ alike). */
export const SCHEMA_PATH: string = packageFile('organism.schema.json');

/**
 * Annotation keyword for optional keys whose absence is itself a setting (no SMTP, the embedded
 * store...): says what absence means where a literal `default` would be wrong.
 */
export const WHEN_UNSET = 'x-when-unset';

/** Placeholders in defaults that the loader fills from other keys once those are known. */
export const DATA_DIR_PLACEHOLDER = '<data_dir>';
export const ORGANISM_NAME_PLACEHOLDER = '<organism.name>';

export const organismSchema: JsonSchema = JSON.parse(readFileSync(SCHEMA_PATH, 'utf8'));

/**
 * The `default` organism.schema.json gives the key at `path` (dots between keys, `[]` for a list's
 * items, `*` for any key of a mapping: `listeners[].tool_config.*.max_result_bytes`). Code that
 * must fall back on a config value's default when built without a loaded config reads it here, so
 * the schema stays the one place defaults are written. Throws ConfigError when it has none there.
 */
export function schemaDefault<T extends string | number | boolean>(path: string): T {
  let node: JsonSchema | undefined = organismSchema;
  for (const step of path.split('.')) {
    const key = step.endsWith('[]') ? step.slice(0, -2) : step;
    const properties = node?.properties as Record<string, JsonSchema> | undefined;
    const extra = node?.additionalProperties;
    node = key === '*' ? (typeof extra === 'object' ? (extra as JsonSchema) : undefined) : properties?.[key];
    if (step.endsWith('[]')) node = node?.items as JsonSchema | undefined;
  }
  const value = node?.default;
  if (value === undefined || (typeof value === 'object' && value !== null)) {
    throw new ConfigError([{ file: SCHEMA_PATH, path, message: 'the schema gives no scalar default here' }]);
  }
  return value as T;
}
