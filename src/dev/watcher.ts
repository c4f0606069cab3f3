/**
 * Watches a WatchSet with node:fs watch, one non-recursive watcher per folder that holds a watched
 * file (inotify on Linux, FSEvents / ReadDirectoryChangesW elsewhere), and reports saves once they
 * have settled for `debounceMs`.
 *
 * Folders, not files: editors save by writing a temporary file and renaming it over the original,
 * which leaves a watcher on the file itself watching the old, unlinked inode. Not recursive over
 * the project: the set of files is known (from organism.yaml and the imports), and a recursive
 * watch would also see node_modules and the data dir, which the daemon writes all the time.
 * (chokidar would do this too; for a known list of files fs.watch on their folders is enough.)
 */
import { type FSWatcher, watch } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { WatchSet } from './watch-set.ts';

/** A module file in a tool_modules folder, as the tool catalog counts them. */
const MODULE_FILE = /^[^.].*\.(ts|mts|js|mjs)$/;

/** What the watcher needs of a WatchSet. */
export type Watched = Pick<WatchSet, 'files' | 'moduleFolders'>;

export interface WatcherOptions {
  /** Quiet time after the last event before the saves are reported, ms. */
  debounceMs: number;
  /** Called with the saved files (absolute, sorted) once they have settled. */
  onSave(files: string[]): void;
  /** A folder that could not be watched (gone, no permission); it is tried again at the next update. */
  onError?(folder: string, error: Error): void;
}

export class FolderWatcher {
  readonly #options: WatcherOptions;
  readonly #watchers = new Map<string, FSWatcher>();
  #set: Watched = { files: new Set(), moduleFolders: new Set() };
  readonly #saved = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: WatcherOptions) {
    this.#options = options;
  }

  /** Watches exactly the folders `set` needs: new ones are opened, ones no longer needed closed. */
  update(set: Watched): void {
    if (this.#closed) return;
    this.#set = set;
    const folders = new Set<string>(set.moduleFolders);
    for (const file of set.files) folders.add(dirname(file));
    for (const [folder, watcher] of this.#watchers) {
      if (folders.has(folder)) continue;
      watcher.close();
      this.#watchers.delete(folder);
    }
    for (const folder of folders) {
      if (this.#watchers.has(folder)) continue;
      try {
        // Not persistent: the daemon's server keeps the process alive, the watchers need not.
        const watcher = watch(folder, { persistent: false }, (_event, name) => this.#event(folder, name));
        watcher.on('error', (error) => {
          watcher.close();
          if (this.#watchers.get(folder) === watcher) this.#watchers.delete(folder);
          this.#options.onError?.(folder, error);
        });
        this.#watchers.set(folder, watcher);
      } catch (error) {
        this.#options.onError?.(folder, error as Error);
      }
    }
  }

  /** The folders watched now (for tests and the start line). */
  folders(): string[] {
    return [...this.#watchers.keys()].sort();
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    for (const watcher of this.#watchers.values()) watcher.close();
    this.#watchers.clear();
  }

  #event(folder: string, name: string | Buffer | null): void {
    if (this.#closed) return;
    if (name === null) {
      // The platform did not say which entry changed: any watched file of the folder may have.
      for (const file of this.#set.files) if (dirname(file) === folder) this.#saved.add(file);
    } else {
      const file = join(folder, String(name));
      const relevant =
        this.#set.files.has(file) ||
        (this.#set.moduleFolders.has(folder) && MODULE_FILE.test(basename(file)));
      if (!relevant) return;
      this.#saved.add(file);
    }
    if (this.#saved.size === 0) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      const files = [...this.#saved].sort();
      this.#saved.clear();
      this.#options.onSave(files);
    }, this.#options.debounceMs);
  }
}
