/**
 * organism.schema.json, read once. The loader, the validator and the README reference all read this
 * one object, so they cannot drift apart.
 */
import { readFileSync } from 'node:fs';
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
