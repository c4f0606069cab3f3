/**
 * list_dir: the entries of a folder in the workspace (optionally its whole tree), with type, size
 * and modification time, filtered by a glob. Symbolic links are listed as links and never followed,
 * so a recursive listing cannot wander outside the workspace. Each folder is opened first and its
 * entries read through that descriptor once its real path is checked (fs-fd.ts), so a folder
 * swapped for a link while the walk runs is refused or skipped, never listed.
 */
import type { Dirent } from 'node:fs';
import { lstat, opendir, stat } from 'node:fs/promises';
import picomatch from 'picomatch';
import { FileToolError } from '../src/errors.ts';
import type { ToolDefinition } from '../src/tools/types.ts';
import { FILE_TOOL_DEFAULTS, fileToolConfigSchema, positiveInt, throwIfAborted } from './lib/fs-config.ts';
import { isInside } from './lib/fs-confine.ts';
import { fsError } from './lib/fs-errors.ts';
import { inDir, type OpenDir, openDir } from './lib/fs-fd.ts';
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

async function isFile(where: string): Promise<boolean> {
  return (await stat(where).catch(() => undefined))?.isFile() ?? false;
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
      // The default is filled in before the file guard judges the call, which needs a path.
      path: {
        type: 'string',
        minLength: 1,
        default: '.',
        description: 'Folder relative to the workspace; default ".".',
      },
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
    let top: OpenDir;
    try {
      top = await openDir(target.real);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOTDIR' && (await isFile(target.real))) {
        throw new FileToolError(
          'file.not_directory',
          `${JSON.stringify(shown)} is a file, not a folder; use read_file`,
          { path: shown },
        );
      }
      throw fsError(error, shown, 'list');
    }
    try {
      target.confirm(top.real);
    } catch (error) {
      await top.handle.close().catch(() => {});
      throw error;
    }

    const entries: DirEntry[] = [];
    let truncated = false;
    let scanned = 0;
    /**
     * Lists the folder held by `dir`, depth-first, each folder sorted by name so the order is stable
     * between calls; closes `dir`. Entries are read, lstat'ed and descended into through the
     * descriptor (by name, not following links), so they are the checked folder's whatever happens
     * to the paths meanwhile; a sub-folder is listed only while its real path is below the listed
     * folder (one moved away meanwhile is skipped). One descriptor is open per level of depth.
     */
    const walk = async (dir: OpenDir, prefix: string): Promise<boolean> => {
      try {
        throwIfAborted(ctx.signal, shown);
        const children: Dirent[] = [];
        try {
          for await (const entry of await opendir(inDir(dir))) children.push(entry);
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
          const type = typeOf(child);
          if (match === undefined || match(name)) {
            if (entries.length >= maxEntries) {
              truncated = true;
              return false;
            }
            const info = await lstat(inDir(dir, child.name)).catch(() => undefined);
            if (info) entries.push({ name, type, size: info.size, modified: info.mtime.toISOString() });
          }
          if (recursive && type === 'dir') {
            const sub = await openDir(inDir(dir, child.name)).catch(() => undefined);
            if (sub && isInside(top.real, sub.real)) {
              if (!(await walk(sub, `${name}/`))) return false;
            } else await sub?.handle.close().catch(() => {});
          }
        }
        return true;
      } finally {
        await dir.handle.close().catch(() => {});
      }
    };
    await walk(top, '');

    const result: ListDirResult = { path: target.relative, entries, truncated };
    if (target.warning) result.warning = target.warning;
    return result;
  },
};

export default tool;
