/**
 * The organism's own code, which the file guard (file.ts) refuses to every writing file tool.
 */
import path from 'node:path';
import { isInside, realOrSelf } from './path-forms.ts';

/**
 * The organism's own code: listener handlers, tool modules (a tool_modules folder whole, since a
 * module added there is loaded too), the local files they import and the agents' scripts. Readable,
 * never written by a file tool: `organism dev` loads a saved one at once and a reload loads it
 * into the daemon, outside every sandbox, as some other listener's code. Registered by each tool
 * runtime under a key of its own and forgotten when it closes, so during a reload both the old
 * organism's files and the new one's are protected. Compared in lower case, as a case-insensitive
 * file system opens them (the credential names are compared so too).
 */
export class OrganismCode {
  readonly #sources = new Map<unknown, { files: Map<string, string>; folders: Map<string, string> }>();
  /** Every source's files in one map: one lookup per path on the guard's path. */
  #files = new Map<string, string>();
  #folders: Array<[string, string]> = [];

  /** `files` and `folders`: absolute path -> what it is ("the handler of listener x"). */
  set(source: unknown, own: { files: Map<string, string>; folders: Map<string, string> }): void {
    const fold = (list: Map<string, string>) => {
      const out = new Map<string, string>();
      for (const [p, what] of list) {
        for (const form of [path.resolve(p), realOrSelf(path.resolve(p))]) out.set(form.toLowerCase(), what);
      }
      return out;
    };
    this.#sources.set(source, { files: fold(own.files), folders: fold(own.folders) });
    this.#merge();
  }

  delete(source: unknown): void {
    if (this.#sources.delete(source)) this.#merge();
  }

  /** What `p` is of the organism's code, or undefined. */
  holds(p: string): string | undefined {
    if (this.#files.size === 0 && this.#folders.length === 0) return undefined;
    const lower = p.toLowerCase();
    const file = this.#files.get(lower);
    if (file !== undefined) return file;
    for (const [folder, what] of this.#folders) if (isInside(folder, lower)) return what;
    return undefined;
  }

  #merge(): void {
    this.#files = new Map();
    const folders = new Map<string, string>();
    for (const { files, folders: own } of this.#sources.values()) {
      for (const [p, what] of files) if (!this.#files.has(p)) this.#files.set(p, what);
      for (const [p, what] of own) if (!folders.has(p)) folders.set(p, what);
    }
    this.#folders = [...folders];
  }
}

export const organismCode = new OrganismCode();
