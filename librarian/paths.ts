/**
 * Database paths as eXist-db spells them: `/db`, then segments separated by `/`. Every path a tool
 * receives goes through here before a backend sees it, so `..`, empty segments and characters that
 * would change meaning in a URL (`?`, `#`, `%`, `\`) never reach eXist's REST URL or the disk.
 */
import { LibrarianError } from '../src/errors.ts';

export const ROOT = '/db';
const MAX_SEGMENT = 200;
const MAX_DEPTH = 32;
// Characters that would be read as URL syntax, escapes or a Windows path separator.
const BAD_CHARS = /[?#%\\\u0000-\u001f\u007f]/;

function checkSegment(segment: string, whole: string, what: string): void {
  if (segment === '')
    throw new LibrarianError(
      'librarian.invalid_path',
      `${what} ${JSON.stringify(whole)} has an empty segment`,
    );
  if (segment === '.' || segment === '..') {
    throw new LibrarianError(
      'librarian.invalid_path',
      `${what} ${JSON.stringify(whole)} may not contain "." or ".." segments`,
    );
  }
  if (segment.length > MAX_SEGMENT) {
    throw new LibrarianError(
      'librarian.invalid_path',
      `${what} ${JSON.stringify(whole)} has a segment longer than ${MAX_SEGMENT} characters`,
    );
  }
  const bad = BAD_CHARS.exec(segment);
  if (bad) {
    throw new LibrarianError(
      'librarian.invalid_path',
      `${what} ${JSON.stringify(whole)} contains ${JSON.stringify(bad[0])}, which is not allowed in a database path`,
    );
  }
  if (segment.trim() !== segment) {
    throw new LibrarianError(
      'librarian.invalid_path',
      `${what} ${JSON.stringify(whole)} has a segment starting or ending in whitespace`,
    );
  }
}

/** An absolute path: `/db` or below, without a trailing slash. */
export function normalizeAbsolute(path: string, what = 'path'): string {
  if (typeof path !== 'string' || path === '')
    throw new LibrarianError('librarian.invalid_path', `${what} is empty`);
  const trimmed = path.length > 1 ? path.replace(/\/+$/, '') : path;
  if (trimmed !== ROOT && !trimmed.startsWith(`${ROOT}/`)) {
    throw new LibrarianError(
      'librarian.invalid_path',
      `${what} ${JSON.stringify(path)} must be /db or start with /db/`,
    );
  }
  const segments = trimmed.slice(1).split('/');
  if (segments.length > MAX_DEPTH)
    throw new LibrarianError(
      'librarian.invalid_path',
      `${what} ${JSON.stringify(path)} is nested deeper than ${MAX_DEPTH}`,
    );
  for (const segment of segments) checkSegment(segment, path, what);
  return trimmed;
}

export function normalizeCollection(path: string): string {
  return normalizeAbsolute(path, 'collection');
}

/** An argument that may be absolute (`/db/...`) or relative to `base` (`notes/a.xml`). */
export function resolvePath(arg: string, base: string, what = 'path'): string {
  if (typeof arg !== 'string' || arg.trim() === '')
    throw new LibrarianError('librarian.invalid_path', `${what} is empty`);
  if (arg.startsWith('/')) return normalizeAbsolute(arg, what);
  return normalizeAbsolute(`${base}/${arg}`, what);
}

/** Checks a document name: one segment, no slash. */
export function checkDocumentName(name: string): string {
  if (typeof name !== 'string' || name === '')
    throw new LibrarianError('librarian.invalid_path', 'document_name is empty');
  if (name.includes('/'))
    throw new LibrarianError(
      'librarian.invalid_path',
      `document_name ${JSON.stringify(name)} may not contain "/"; put the folder in collection`,
    );
  checkSegment(name, name, 'document_name');
  return name;
}

export function joinPath(collection: string, name: string): string {
  return collection === '/' ? `/${name}` : `${collection}/${name}`;
}

export function parentOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}

export function nameOf(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** True when `path` is `collection` itself or anything below it. */
export function isWithin(path: string, collection: string): boolean {
  return path === collection || path.startsWith(`${collection}/`);
}

/** The path's segments percent-encoded for a URL (`/db/my notes/a.xml` -> `/db/my%20notes/a.xml`). */
export function encodePath(path: string): string {
  return path
    .split('/')
    .map((segment) => encodeURIComponent(segment))
    .join('/');
}
