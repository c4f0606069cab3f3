/**
 * The librarian's options: organism.yaml's `librarian:` section with its defaults applied in one
 * place. The loader has already validated the section against organism.schema.json; this only fills
 * defaults and resolves what the schema cannot (the password from its env var, the data folder).
 */
import { join } from 'node:path';
import { LibrarianError } from '../src/errors.ts';
import { normalizeCollection } from './paths.ts';

export interface LibrarianOptions {
  backend: 'embedded' | 'exist' | 'basex';
  /** Collection used when a call names none; also what is indexed at start. */
  defaultCollection: string;
  /** embedded: where documents live (`<data_dir>/librarian`). */
  dataDir: string;
  /**
   * exist: REST base URL, e.g. http://localhost:8080/exist/rest (no trailing slash); basex: the
   * server's address, basex://host:port (port 1984 when left out).
   */
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
  backend?: 'embedded' | 'exist' | 'basex';
  url?: string;
  user?: string;
  password_env?: string;
  default_collection?: string;
}

export function resolveLibrarianOptions(raw: unknown, dataDir: string): LibrarianOptions {
  const section = (raw ?? {}) as RawLibrarianSection;
  const backend = section.backend ?? LIBRARIAN_DEFAULTS.backend;
  if (backend !== 'embedded' && backend !== 'exist' && backend !== 'basex') {
    throw new LibrarianError(
      'librarian.not_configured',
      `librarian.backend must be embedded, exist or basex, not ${String(backend)}`,
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
  if (options.backend === 'basex') return basexUnavailable(options, env);
  if (!options.url) return 'librarian.backend is exist but librarian.url is not set';
  if (!/^https?:\/\//.test(options.url))
    return `librarian.url must start with http:// or https://, not ${options.url}`;
  if (options.passwordEnv && env[options.passwordEnv] === undefined) {
    return `librarian.password_env names ${options.passwordEnv}, which is not set in the environment`;
  }
  return null;
}

export const BASEX_DEFAULT_PORT = 1984;

/** host and port of a basex:// address, or null when it is not one. */
export function basexAddress(url: string): { host: string; port: number } | null {
  const m = /^basex:\/\/(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?$/.exec(url);
  if (!m) return null;
  const port = m[2] === undefined ? BASEX_DEFAULT_PORT : Number(m[2]);
  if (port < 1 || port > 65535) return null;
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port };
}

function basexUnavailable(options: LibrarianOptions, env: NodeJS.ProcessEnv): string | null {
  if (!options.url) return 'librarian.backend is basex but librarian.url (basex://host:port) is not set';
  if (!basexAddress(options.url))
    return `librarian.url must be basex://host or basex://host:port for the basex backend, not ${options.url}`;
  if (!options.user)
    return 'librarian.backend is basex but librarian.user is not set (BaseX has no anonymous access)';
  if (!options.passwordEnv) return 'librarian.backend is basex but librarian.password_env is not set';
  if (env[options.passwordEnv] === undefined)
    return `librarian.password_env names ${options.passwordEnv}, which is not set in the environment`;
  return null;
}
