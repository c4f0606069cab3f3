/**
 * The librarian's options: organism.yaml's `librarian:` section with its defaults applied in one
 * place. The loader has already validated the section against organism.schema.json; this only fills
 * defaults and resolves what the schema cannot (the password from its env var, the data folder).
 */
import { join } from 'node:path';
import { LibrarianError } from '../src/errors.ts';
import { normalizeCollection } from './paths.ts';

export interface LibrarianOptions {
  backend: 'embedded' | 'exist';
  /** Collection used when a call names none; also what is indexed at start. */
  defaultCollection: string;
  /** embedded: where documents live (`<data_dir>/librarian`). */
  dataDir: string;
  /** exist: REST base URL, e.g. http://localhost:8080/exist/rest (no trailing slash). */
  url?: string;
  user?: string;
  /** Name of the env var holding the password (the password itself is read at connect time). */
  passwordEnv?: string;
}

export const LIBRARIAN_DEFAULTS = {
  backend: 'embedded',
  default_collection: '/db/organism',
} as const;

/** The raw `librarian:` section (snake_case, as in organism.yaml). */
export interface RawLibrarianSection {
  backend?: 'embedded' | 'exist';
  url?: string;
  user?: string;
  password_env?: string;
  default_collection?: string;
}

export function resolveLibrarianOptions(raw: unknown, dataDir: string): LibrarianOptions {
  const section = (raw ?? {}) as RawLibrarianSection;
  const backend = section.backend ?? LIBRARIAN_DEFAULTS.backend;
  if (backend !== 'embedded' && backend !== 'exist') {
    throw new LibrarianError(
      'librarian.not_configured',
      `librarian.backend must be embedded or exist, not ${String(backend)}`,
    );
  }
  const options: LibrarianOptions = {
    backend,
    defaultCollection: normalizeCollection(
      section.default_collection ?? LIBRARIAN_DEFAULTS.default_collection,
    ),
    dataDir: join(dataDir, 'librarian'),
  };
  if (section.url !== undefined) options.url = section.url.replace(/\/+$/, '');
  if (section.user !== undefined) options.user = section.user;
  if (section.password_env !== undefined) options.passwordEnv = section.password_env;
  return options;
}

/** Why the configured backend cannot be used, or null when it can. Never mentions the password. */
export function librarianUnavailable(
  options: LibrarianOptions,
  env: NodeJS.ProcessEnv = process.env,
): string | null {
  if (options.backend === 'embedded') return null;
  if (!options.url) return 'librarian.backend is exist but librarian.url is not set';
  if (!/^https?:\/\//.test(options.url))
    return `librarian.url must start with http:// or https://, not ${options.url}`;
  if (options.passwordEnv && env[options.passwordEnv] === undefined) {
    return `librarian.password_env names ${options.passwordEnv}, which is not set in the environment`;
  }
  return null;
}
