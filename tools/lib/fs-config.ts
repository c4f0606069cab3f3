/** tool_config keys shared by read_file, write_file and list_dir, read and checked in one place. */
import { FileToolError } from '../../src/errors.ts';
import type { ToolConfig } from '../../src/tools/types.ts';
import type { JsonSchema } from '../../src/xml/json-schema.ts';

export const FILE_TOOL_DEFAULTS = {
  /** read_file: most bytes returned; write_file: largest file after the write. */
  max_bytes: 1024 * 1024,
  /** list_dir: the default max_entries, and the cap a call may raise it to. */
  list_entries: 1000,
  max_entries: 10_000,
} as const;

/** JSON Schema of `allowed_paths`, the same for all three tools. */
export const ALLOWED_PATHS_SCHEMA = {
  type: 'array',
  items: { type: 'string', minLength: 1 },
  description:
    'Globs (relative to the workspace) the tool may touch, e.g. ["docs/**", "notes/*.md"]; anything else is ' +
    'refused. Unset: the whole workspace, as far as the file guard allows.',
};

/**
 * A file tool's tool_config schema: allowed_paths plus the one limit it enforces (max_bytes for
 * read_file and write_file, max_entries for list_dir), defaulting to FILE_TOOL_DEFAULTS.
 */
export function fileToolConfigSchema(limit: 'max_bytes' | 'max_entries', description: string): JsonSchema {
  return {
    type: 'object',
    properties: {
      allowed_paths: ALLOWED_PATHS_SCHEMA,
      [limit]: { type: 'integer', minimum: 1, default: FILE_TOOL_DEFAULTS[limit], description },
    },
  };
}

export function positiveInt(config: ToolConfig, key: string, fallback: number): number {
  const value = config[key] ?? fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new FileToolError('file.bad_argument', `tool_config.${key} must be a positive integer`);
  }
  return value;
}

export function throwIfAborted(signal: AbortSignal, shown: string): void {
  if (signal.aborted) {
    throw new FileToolError(
      'file.aborted',
      `cancelled (the call timed out or the organism is shutting down): ${shown}`,
    );
  }
}
