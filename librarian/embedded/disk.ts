/**
 * The embedded store's files: a collection is a directory, a document a file, under
 * `<data_dir>/librarian/db/...`. Each path segment is percent-encoded into a file name, with a
 * leading dot encoded too, so names starting with "." are ours alone: writes go to
 * `.<name>.<random>.tmp` and are renamed into place, so a crash leaves either the old document or
 * the new one, never half of one; leftover temp files are swept at open.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { LibrarianError } from '../../src/errors.ts';
import { joinPath } from '../paths.ts';

export function encodeSegment(segment: string): string {
  return encodeURIComponent(segment).replace(/^\./, '%2E').replace(/\*/g, '%2A');
}

export function decodeSegment(name: string): string {
  return decodeURIComponent(name);
}

function io(error: unknown, what: string): LibrarianError {
  const e = error as NodeJS.ErrnoException;
  return new LibrarianError(
    'librarian.io',
    `embedded librarian could not ${what}: ${e.code ?? e.message}`,
    undefined,
    {
      cause: error,
    },
  );
}

export class DiskStore {
  constructor(readonly root: string) {}

  /** File system location of a database path (`/db/a/b.xml` -> `<root>/db/a/b.xml`). */
  location(path: string): string {
    return join(this.root, ...path.slice(1).split('/').map(encodeSegment));
  }

  async kind(path: string): Promise<'document' | 'collection' | null> {
    try {
      const s = await stat(this.location(path));
      return s.isDirectory() ? 'collection' : s.isFile() ? 'document' : null;
    } catch (error) {
      if (
        (error as NodeJS.ErrnoException).code === 'ENOENT' ||
        (error as NodeJS.ErrnoException).code === 'ENOTDIR'
      )
        return null;
      throw io(error, `read ${path}`);
    }
  }

  async ensureCollection(path: string): Promise<void> {
    try {
      await mkdir(this.location(path), { recursive: true });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EEXIST' || code === 'ENOTDIR') {
        throw new LibrarianError(
          'librarian.conflict',
          `cannot create collection ${path}: a document is in the way`,
          { path },
        );
      }
      throw io(error, `create collection ${path}`);
    }
  }

  /** Writes the document atomically: temp file, fsync, rename over the old one. */
  async write(path: string, content: string): Promise<void> {
    const file = this.location(path);
    const temp = join(dirname(file), `.${randomBytes(6).toString('hex')}.tmp`);
    try {
      const handle = await open(temp, 'wx', 0o600);
      try {
        await handle.writeFile(content, 'utf8');
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, file);
    } catch (error) {
      await unlink(temp).catch(() => {});
      throw io(error, `write ${path}`);
    }
  }

  async read(path: string): Promise<string | null> {
    try {
      return await readFile(this.location(path), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw io(error, `read ${path}`);
    }
  }

  async remove(path: string): Promise<void> {
    try {
      await rm(this.location(path), { recursive: true, force: true });
    } catch (error) {
      throw io(error, `delete ${path}`);
    }
  }

  /** Sub-collections and documents directly in `collection`, names decoded and sorted. */
  async list(collection: string): Promise<{ collections: string[]; documents: string[] }> {
    let entries: import('node:fs').Dirent[];
    try {
      entries = await readdir(this.location(collection), { withFileTypes: true });
    } catch (error) {
      throw io(error, `list ${collection}`);
    }
    const collections: string[] = [];
    const documents: string[] = [];
    for (const e of entries) {
      if (e.name.startsWith('.')) continue;
      if (e.isDirectory()) collections.push(decodeSegment(e.name));
      else if (e.isFile()) documents.push(decodeSegment(e.name));
    }
    return { collections: collections.sort(), documents: documents.sort() };
  }

  /**
   * Every document path under `collection`, recursively. With `sweep`, temp files left by a crash
   * are deleted on the way; only the writer may sweep (a reader would delete writes in flight).
   */
  async walk(collection: string, options: { sweep: boolean }): Promise<string[]> {
    const out: string[] = [];
    const visit = async (path: string): Promise<void> => {
      const dir = this.location(path);
      for (const e of await readdir(dir, { withFileTypes: true })) {
        if (e.name.startsWith('.')) {
          if (options.sweep && e.isFile() && e.name.endsWith('.tmp'))
            await unlink(join(dir, e.name)).catch(() => {});
          continue;
        }
        const child = joinPath(path, decodeSegment(e.name));
        if (e.isDirectory()) await visit(child);
        else if (e.isFile()) out.push(child);
      }
    };
    try {
      await visit(collection);
    } catch (error) {
      throw io(error, `read the store under ${collection}`);
    }
    return out.sort();
  }
}
