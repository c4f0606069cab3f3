/**
 * read_file: a text file's lines (offset/limit) or a binary file as base64, confined to the
 * workspace and allowed_paths by the file guard, capped at tool_config.max_bytes.
 */
import { constants } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import path from 'node:path';
import { FileToolError } from '../src/errors.ts';
import type { ToolDefinition } from '../src/tools/types.ts';
import { FILE_TOOL_DEFAULTS, fileToolConfigSchema, positiveInt, throwIfAborted } from './lib/fs-config.ts';
import { BINARY_SNIFF_BYTES, looksBinary } from './lib/fs-encoding.ts';
import { fsError } from './lib/fs-errors.ts';
import { inDir, openDir, realPathOfFd } from './lib/fs-fd.ts';
import { readLineWindow } from './lib/fs-lines.ts';
import { resolveToolPath } from './lib/fs-path.ts';

export interface ReadFileArgs {
  path: string;
  offset?: number;
  limit?: number;
  encoding?: 'utf8' | 'base64';
}

export interface ReadFileResult {
  path: string;
  content: string;
  encoding: 'utf8' | 'base64';
  /** True when the file looked binary (a NUL byte) and came back as base64 although utf8 was asked. */
  binary?: boolean;
  lines_returned: number;
  /** Lines in the whole file, when it was scanned to the end. */
  total_lines?: number;
  /** Cut at max_bytes. */
  truncated: boolean;
  /** Lines remain after this window: pass this as offset to read on. */
  next_offset?: number;
  /** File size in bytes. */
  size: number;
  warning?: string;
}

/** Line counting past the window is cheap, but not unbounded. */
const COUNT_LINES_UP_TO = 16 * 1024 * 1024;

async function readBytes(handle: FileHandle, length: number): Promise<Buffer> {
  const buf = Buffer.alloc(length);
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await handle.read(buf, filled, length - filled, filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buf.subarray(0, filled);
}

const tool: ToolDefinition<ReadFileArgs, ReadFileResult> = {
  name: 'read_file',
  description:
    'Read a file in the workspace. Text comes back as UTF-8 with its line endings; use offset (0-based ' +
    'line number) and limit (number of lines) to read a long file in parts: next_offset says where to go ' +
    'on, total_lines how long the file is. A binary file (or encoding "base64") comes back base64-encoded ' +
    'with binary: true. Output is capped at a size limit (truncated: true). Paths are relative to the workspace.',
  args: {
    type: 'object',
    additionalProperties: false,
    required: ['path'],
    properties: {
      path: {
        type: 'string',
        minLength: 1,
        description: 'File path relative to the workspace, e.g. "notes/todo.md".',
      },
      offset: { type: 'integer', minimum: 0, description: 'First line to return, 0-based. Default 0.' },
      limit: {
        type: 'integer',
        minimum: 1,
        description: 'Most lines to return. Default: to the end of the file.',
      },
      encoding: {
        type: 'string',
        enum: ['utf8', 'base64'],
        description: 'utf8 (default) for text; base64 for the raw bytes (offset and limit do not apply).',
      },
    },
  },
  readOnly: true,
  capability: 'read',
  source: 'native',
  guard: 'file',
  config: fileToolConfigSchema('max_bytes', 'Most bytes of content one call returns (before base64).'),
  async run(args, ctx) {
    const maxBytes = positiveInt(ctx.config, 'max_bytes', FILE_TOOL_DEFAULTS.max_bytes);
    const offset = args.offset ?? 0;
    if (!Number.isInteger(offset) || offset < 0) {
      throw new FileToolError('file.bad_argument', 'offset must be a line number, 0 or more');
    }
    if (args.limit !== undefined && (!Number.isInteger(args.limit) || args.limit < 1)) {
      throw new FileToolError('file.bad_argument', 'limit must be a number of lines, 1 or more');
    }
    const encoding = args.encoding ?? 'utf8';
    if (encoding !== 'utf8' && encoding !== 'base64') {
      throw new FileToolError('file.bad_argument', 'encoding must be "utf8" or "base64"');
    }
    const target = await resolveToolPath(args.path, 'read', ctx);
    const shown = target.shown;
    throwIfAborted(ctx.signal, shown);

    let handle: FileHandle;
    try {
      // A parent folder may have been swapped for a link since the check, so the file is not
      // opened by its path: its folder is opened (only a folder, which has no effect), the
      // folder's real path plus the name checked, and the file opened by name inside it. So
      // nothing outside the allowed places is opened, not even for a moment (opening a device or
      // a FIFO can do something by itself). O_NOFOLLOW: the name itself is no link either.
      // O_NONBLOCK: opening a FIFO must not hang the call.
      const name = path.basename(target.real);
      const dir = await openDir(path.dirname(target.real));
      try {
        target.confirm(path.join(dir.real, name));
        handle = await open(
          inDir(dir, name),
          constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
        );
      } finally {
        await dir.handle.close().catch(() => {});
      }
    } catch (error) {
      throw fsError(error, shown, 'read');
    }
    try {
      // And what was opened, by its descriptor: the same answer on Linux, and the check that
      // counts where there is no /proc and the folder is named by its path.
      target.confirm(await realPathOfFd(handle, target.real));
      const st = await handle.stat();
      if (st.isDirectory()) {
        throw new FileToolError(
          'file.is_directory',
          `${JSON.stringify(shown)} is a directory; use list_dir to see inside it`,
          {
            path: shown,
          },
        );
      }
      if (!st.isFile()) {
        throw new FileToolError(
          'file.bad_argument',
          `${JSON.stringify(shown)} is not a regular file (device, FIFO or socket)`,
          {
            path: shown,
          },
        );
      }
      const head = await readBytes(handle, Math.min(st.size, BINARY_SNIFF_BYTES));
      const binary = looksBinary(head);
      const base: Pick<ReadFileResult, 'path' | 'size'> & { warning?: string } = {
        path: target.relative,
        size: st.size,
      };
      if (target.warning) base.warning = target.warning;

      if (encoding === 'base64' || binary) {
        const bytes = await readBytes(handle, Math.min(st.size, maxBytes));
        const result: ReadFileResult = {
          ...base,
          content: bytes.toString('base64'),
          encoding: 'base64',
          lines_returned: 0,
          truncated: st.size > bytes.length,
        };
        if (binary) result.binary = true;
        return result;
      }

      const window = await readLineWindow(handle, {
        offset,
        limit: args.limit,
        maxBytes,
        countLinesUpTo: Math.max(maxBytes, COUNT_LINES_UP_TO),
        size: st.size,
        checkAbort: () => throwIfAborted(ctx.signal, shown),
      });
      if (offset > 0 && window.lines_returned === 0 && window.total_lines !== undefined) {
        throw new FileToolError(
          'file.bad_argument',
          `offset ${offset} is past the end of ${JSON.stringify(shown)}, which has ${window.total_lines} lines`,
          { path: shown, total_lines: window.total_lines },
        );
      }
      const result: ReadFileResult = {
        ...base,
        content: window.content.toString('utf8'),
        encoding: 'utf8',
        lines_returned: window.lines_returned,
        truncated: window.truncated,
      };
      if (window.total_lines !== undefined) result.total_lines = window.total_lines;
      if (window.next_offset !== undefined) result.next_offset = window.next_offset;
      return result;
    } catch (error) {
      throw fsError(error, shown, 'read');
    } finally {
      await handle.close().catch(() => {});
    }
  },
};

export default tool;
