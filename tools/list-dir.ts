/**
 * list_dir: the entries of a folder in the workspace (optionally its whole tree), with type, size
 * and modification time, filtered by a glob. Symbolic links are listed as links and never followed,
 * so a recursive listing cannot wander outside the workspace.
 */
import type { Dirent } from 'node:fs';
import { lstat, opendir, stat } from 'node:fs/promises';
import path from 'node:path';
import picomatch from 'picomatch';
import { FileToolError } from '../src/errors.ts';
import type { ToolDefinition } from '../src/tools/types.ts';
import { FILE_TOOL_DEFAULTS, fileToolConfigSchema, positiveInt, throwIfAborted } from './lib/fs-config.ts';
import { fsError } from './lib/fs-errors.ts';
import { resolveToolPath } from './lib/fs-path.ts';

export interface ListDirArgs {
  path?: string;
  pattern?: string;
  recursive?: boolean;
  max_entries?: number;
}

export interface DirEntry {
  /** Relative to the listed folder, `/`-separated (`src/index.ts` in a recursive listing). */
  name: string;
  type: 'file' | 'dir' | 'symlink' | 'other';
  size: number;
  /** ISO 8601. */
  modified: string;
}

export interface ListDirResult {
  path: string;
  entries: DirEntry[];
  /** More entries matched than max_entries, or the walk stopped at its scan limit. */
  truncated: boolean;
  warning?: string;
}

/** A recursive walk visits at most this many entries, matched or not, so one call stays bounded. */
const MAX_SCANNED = 100_000;

function typeOf(entry: Dirent): DirEntry['type'] {
  if (entry.isSymbolicLink()) return 'symlink';
  if (entry.isDirectory()) return 'dir';
  if (entry.isFile()) return 'file';
  return 'other';
}

const tool: ToolDefinition<ListDirArgs, ListDirResult> = {
  name: 'list_dir',
  description:
    'List a folder in the workspace: each entry with name, type (file, dir, symlink, other), size in bytes ' +
    'and modified time. Set recursive to list the whole tree (names are then relative paths such as ' +
    '"src/main.ts"); pattern filters by glob ("*.md" matches by file name at any depth, "src/**/*.ts" by ' +
    'relative path). Symbolic links are listed, not followed. At most max_entries come back (truncated: true ' +
    'says there were more). path defaults to the workspace itself.',
  args: {
    type: 'object',
    additionalProperties: false,
    properties: {
      path: { type: 'string', minLength: 1, description: 'Folder relative to the workspace; default ".".' },
      pattern: {
        type: 'string',
        minLength: 1,
        description: 'Glob to filter entries, e.g. "*.ts" or "docs/**/*.md".',
      },
      recursive: { type: 'boolean', description: 'List sub-folders too; default false.' },
      max_entries: { type: 'integer', minimum: 1, description: 'Most entries to return; default 1000.' },
    },
  },
  readOnly: true,
  capability: 'read',
  source: 'native',
  guard: 'file',
  config: fileToolConfigSchema(
    'max_entries',
    'Most entries one call may ask for (its max_entries argument is capped at this).',
  ),
  async run(args, ctx) {
    const cap = positiveInt(ctx.config, 'max_entries', FILE_TOOL_DEFAULTS.max_entries);
    const wanted = args.max_entries ?? FILE_TOOL_DEFAULTS.list_entries;
    if (!Number.isInteger(wanted) || wanted < 1) {
      throw new FileToolError('file.bad_argument', 'max_entries must be a positive whole number');
    }
    const maxEntries = Math.min(wanted, cap);
    const recursive = args.recursive ?? false;
    if (typeof recursive !== 'boolean')
      throw new FileToolError('file.bad_argument', 'recursive must be true or false');
    let match: ((name: string) => boolean) | undefined;
    if (args.pattern !== undefined) {
      if (typeof args.pattern !== 'string' || args.pattern === '') {
        throw new FileToolError('file.bad_argument', 'pattern must be a non-empty glob such as "*.md"');
      }
      try {
        // A pattern without "/" matches the file name at any depth, as users of `find -name` expect.
        match = picomatch(args.pattern, { dot: true, basename: !args.pattern.includes('/') });
      } catch (error) {
        throw new FileToolError(
          'file.bad_argument',
          `pattern ${JSON.stringify(args.pattern)} is not a valid glob: ${(error as Error).message}`,
        );
      }
    }

    const target = await resolveToolPath(args.path ?? '.', 'read', ctx);
    const shown = target.shown;
    try {
      const st = await stat(target.real);
      if (!st.isDirectory()) {
        throw new FileToolError(
          'file.not_directory',
          `${JSON.stringify(shown)} is a file, not a folder; use read_file`,
          {
            path: shown,
          },
        );
      }
    } catch (error) {
      throw fsError(error, shown, 'list');
    }

    const entries: DirEntry[] = [];
    let truncated = false;
    let scanned = 0;
    // Depth-first, each folder sorted by name, so the order is stable between calls.
    const walk = async (dir: string, prefix: string): Promise<boolean> => {
      throwIfAborted(ctx.signal, shown);
      let children: Dirent[];
      try {
        const handle = await opendir(dir);
        children = [];
        for await (const entry of handle) children.push(entry);
      } catch (error) {
        // The listed folder itself must be readable; an unreadable sub-folder is skipped.
        if (prefix === '') throw fsError(error, shown, 'list');
        return true;
      }
      children.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const child of children) {
        if (++scanned > MAX_SCANNED) {
          truncated = true;
          return false;
        }
        const name = prefix + child.name;
        const full = path.join(dir, child.name);
        const type = typeOf(child);
        if (match === undefined || match(name)) {
          if (entries.length >= maxEntries) {
            truncated = true;
            return false;
          }
          const info = await lstat(full).catch(() => undefined);
          if (info) entries.push({ name, type, size: info.size, modified: info.mtime.toISOString() });
        }
        if (recursive && type === 'dir' && !(await walk(full, `${name}/`))) return false;
      }
      return true;
    };
    await walk(target.real, '');

    const result: ListDirResult = { path: target.relative, entries, truncated };
    if (target.warning) result.warning = target.warning;
    return result;
  },
};

export default tool;
