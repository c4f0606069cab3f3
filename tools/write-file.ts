/**
 * write_file: creates or replaces a file (or appends to it) inside the workspace, atomically:
 * the new content goes to a temp file in the same folder and is renamed over the target. The
 * folder is held open and everything in it is done by names inside its descriptor (fs-fd.ts), so a
 * parent folder swapped for a symbolic link mid-call cannot send the file, or its temp file, outside.
 *
 * Append is read + write temp + rename, not O_APPEND: O_APPEND writes in place, so a crash or a
 * failed write mid-way leaves a half-appended file and a reader can see part of the new content.
 * Read + rename keeps the all-or-nothing promise for both modes; its cost, reading the old file,
 * is bounded because the resulting file must fit in max_bytes anyway.
 */
import { constants } from 'node:fs';
import { lstat, mkdir, open, unlink } from 'node:fs/promises';
import path from 'node:path';
import { FileToolError } from '../src/errors.ts';
import type { ToolDefinition } from '../src/tools/types.ts';
import { serialized, writeAtomicIn } from './lib/fs-atomic.ts';
import { FILE_TOOL_DEFAULTS, fileToolConfigSchema, positiveInt, throwIfAborted } from './lib/fs-config.ts';
import { fsError } from './lib/fs-errors.ts';
import { inDir, type OpenDir, openDir, realPathOfFd } from './lib/fs-fd.ts';
import { type ResolvedPath, resolveToolPath } from './lib/fs-path.ts';

export interface WriteFileArgs {
  path: string;
  content: string;
  mode?: 'overwrite' | 'append';
  encoding?: 'utf8' | 'base64';
}

export interface WriteFileResult {
  path: string;
  bytes_written: number;
  /** Size of the file after the write. */
  size: number;
  created: boolean;
  warning?: string;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function decode(content: string, encoding: string): Buffer {
  if (encoding === 'utf8') return Buffer.from(content, 'utf8');
  const compact = content.replace(/\s+/g, '');
  if (compact.length % 4 !== 0 || !BASE64.test(compact)) {
    throw new FileToolError(
      'file.bad_argument',
      'content is not valid base64 (A-Z a-z 0-9 + /, padded with =)',
    );
  }
  return Buffer.from(compact, 'base64');
}

/**
 * Opens the folder the file goes in, creating missing folders on the way. Nothing is created by a
 * path from the root, where a folder on the way could be swapped for a link to somewhere else:
 * the deepest folder that exists is opened and its real path (the descriptor's) checked with the
 * file name appended, then each missing folder is made and opened inside the previous one's
 * descriptor, without following links. So the folders, the temp file and the file itself all land
 * below the folder that was checked.
 */
async function openParent(target: ResolvedPath): Promise<OpenDir> {
  const name = path.basename(target.real);
  // `missing` ends with the file's own name when the file does not exist yet.
  const toMake = target.missing.slice(0, -1);
  const start = path.resolve(target.real, ...Array<string>(toMake.length + 1).fill('..'));
  let dir = await openDir(start);
  try {
    target.confirm(path.join(dir.real, ...toMake, name));
    for (const part of toMake) {
      await mkdir(inDir(dir, part)).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'EEXIST') throw error;
      });
      const next = await openDir(inDir(dir, part));
      await dir.handle.close().catch(() => {});
      dir = next;
    }
    target.confirm(path.join(dir.real, name));
    return dir;
  } catch (error) {
    await dir.handle.close().catch(() => {});
    throw error;
  }
}

const tool: ToolDefinition<WriteFileArgs, WriteFileResult> = {
  name: 'write_file',
  description:
    'Write a file in the workspace: create it, replace it (mode "overwrite", the default), or add to its end ' +
    '(mode "append"). Missing parent folders are created. The write is all-or-nothing: other readers see the ' +
    'old content or the new, never a half-written file. Text is written as UTF-8; for bytes pass base64 with ' +
    'encoding "base64". Returns bytes_written and the new size. Paths are relative to the workspace.',
  args: {
    type: 'object',
    additionalProperties: false,
    required: ['path', 'content'],
    properties: {
      path: {
        type: 'string',
        minLength: 1,
        description: 'File path relative to the workspace, e.g. "out/report.md".',
      },
      content: { type: 'string', description: 'What to write (text, or base64 when encoding is "base64").' },
      mode: {
        type: 'string',
        enum: ['overwrite', 'append'],
        description: 'overwrite (default) replaces the file; append adds to its end.',
      },
      encoding: {
        type: 'string',
        enum: ['utf8', 'base64'],
        description: 'How content is encoded; default utf8.',
      },
    },
  },
  readOnly: false,
  capability: 'write',
  source: 'native',
  guard: 'file',
  sideEffect: true,
  config: fileToolConfigSchema('max_bytes', 'Largest size a file may have after a write (append included).'),
  async run(args, ctx) {
    const maxBytes = positiveInt(ctx.config, 'max_bytes', FILE_TOOL_DEFAULTS.max_bytes);
    const mode = args.mode ?? 'overwrite';
    if (mode !== 'overwrite' && mode !== 'append') {
      throw new FileToolError('file.bad_argument', 'mode must be "overwrite" or "append"');
    }
    const encoding = args.encoding ?? 'utf8';
    if (encoding !== 'utf8' && encoding !== 'base64') {
      throw new FileToolError('file.bad_argument', 'encoding must be "utf8" or "base64"');
    }
    if (typeof args.content !== 'string')
      throw new FileToolError('file.bad_argument', 'content must be a string');
    const data = decode(args.content, encoding);
    if (data.length > maxBytes) {
      throw new FileToolError(
        'file.too_large',
        `content is ${data.length} bytes; the limit is ${maxBytes} (max_bytes)`,
        {
          bytes: data.length,
          max_bytes: maxBytes,
        },
      );
    }
    const target = await resolveToolPath(args.path, 'write', ctx);
    const shown = target.shown;
    if (target.real === path.parse(target.real).root || target.relative === '.') {
      throw new FileToolError(
        'file.is_directory',
        `${JSON.stringify(shown)} is the workspace folder, not a file`,
      );
    }
    throwIfAborted(ctx.signal, shown);

    return serialized(target.real, async () => {
      let dir: OpenDir | undefined;
      try {
        const name = path.basename(target.real);
        dir = await openParent(target);
        const existing = await lstat(inDir(dir, name)).catch((error: NodeJS.ErrnoException) => {
          if (error.code === 'ENOENT') return undefined;
          throw error;
        });
        if (existing?.isDirectory()) {
          throw new FileToolError(
            'file.is_directory',
            `${JSON.stringify(shown)} is a directory, not a file`,
            {
              path: shown,
            },
          );
        }
        if (existing && !existing.isFile()) {
          throw new FileToolError(
            'file.bad_argument',
            `${JSON.stringify(shown)} is not a regular file (symlink, device, FIFO or socket); not replaced`,
            { path: shown },
          );
        }
        const parts: Buffer[] = [];
        if (mode === 'append' && existing) {
          if (existing.size + data.length > maxBytes) {
            throw new FileToolError(
              'file.too_large',
              `appending ${data.length} bytes would make ${JSON.stringify(shown)} ${existing.size + data.length} ` +
                `bytes; the limit is ${maxBytes} (max_bytes)`,
              { path: shown, max_bytes: maxBytes },
            );
          }
          const old = await open(
            inDir(dir, name),
            constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
          );
          try {
            parts.push(await old.readFile({ signal: ctx.signal }));
          } finally {
            await old.close().catch(() => {});
          }
        }
        parts.push(data);
        throwIfAborted(ctx.signal, shown);
        await writeAtomicIn(dir, name, parts, existing ? existing.mode & 0o7777 : 0o644);
        // The file went into the folder held open, which was checked; but a held folder can still be
        // moved (renamed) meanwhile. If it now sits where this call may not write, take back the
        // file it created (an overwrite cannot be taken back; it happened in the checked folder).
        try {
          target.confirm(path.join(await realPathOfFd(dir.handle, dir.real), name));
        } catch (error) {
          if (!existing) await unlink(inDir(dir, name)).catch(() => {});
          throw error;
        }
        const result: WriteFileResult = {
          path: target.relative,
          bytes_written: data.length,
          size: parts.reduce((n, p) => n + p.length, 0),
          created: existing === undefined,
        };
        if (target.warning) result.warning = target.warning;
        return result;
      } catch (error) {
        throw fsError(error, shown, 'write');
      } finally {
        await dir?.handle.close().catch(() => {});
      }
    });
  },
};

export default tool;
