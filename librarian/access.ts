/**
 * tool_config `allowed_collections` for the librarian tools: globs (picomatch) over database
 * paths. A collection is allowed when its path matches a glob; a document when its own path or its
 * collection's path does. So `/db/organism` allows the documents directly in it, and
 * `/db/organism/**` everything below. Without the key, a listener may use the default collection
 * and everything below it, nothing else (not /db/system, not other applications' data).
 */
import picomatch from 'picomatch';
import { LibrarianError } from '../src/errors.ts';
import { parentOf } from './paths.ts';

export interface AccessPolicy {
  readonly globs: readonly string[];
  allowsCollection(path: string): boolean;
  allowsDocument(path: string): boolean;
  /** Throws librarian.denied unless allowed. */
  checkCollection(path: string): void;
  checkDocument(path: string): void;
}

export function defaultGlobs(defaultCollection: string): string[] {
  return [defaultCollection, `${defaultCollection}/**`];
}

export function accessPolicy(allowed: unknown, defaultCollection: string): AccessPolicy {
  if (
    allowed !== undefined &&
    (!Array.isArray(allowed) || allowed.some((g) => typeof g !== 'string' || g === ''))
  ) {
    throw new LibrarianError(
      'librarian.not_configured',
      'tool_config allowed_collections must be a list of non-empty glob strings',
    );
  }
  const globs = (allowed as string[] | undefined) ?? defaultGlobs(defaultCollection);
  const matchers = globs.map((g) => picomatch(g.length > 1 ? g.replace(/\/+$/, '') : g, { dot: true }));
  const matches = (path: string) => matchers.some((m) => m(path));
  const denied = (path: string, what: string) =>
    new LibrarianError(
      'librarian.denied',
      `${what} ${path} is outside this listener's allowed_collections (${globs.join(', ') || 'none'})`,
      { path, allowed_collections: globs },
    );
  const policy: AccessPolicy = {
    globs,
    allowsCollection: (path) => matches(path),
    allowsDocument: (path) => matches(path) || matches(parentOf(path)),
    checkCollection(path) {
      if (!policy.allowsCollection(path)) throw denied(path, 'collection');
    },
    checkDocument(path) {
      if (!policy.allowsDocument(path)) throw denied(path, 'document');
    },
  };
  return policy;
}
