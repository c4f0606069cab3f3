/**
 * Reads a window of lines from an open file without loading more than the window: lines split at
 * "\n" bytes (safe in UTF-8), line endings kept, output capped at a byte limit.
 */
import type { FileHandle } from 'node:fs/promises';
import { utf8Prefix } from './fs-encoding.ts';

export interface LineWindowOptions {
  /** First line to return, 0-based. */
  offset: number;
  /** Most lines to return; undefined: to the end. */
  limit: number | undefined;
  /** Most bytes of content to return. */
  maxBytes: number;
  /** Keep scanning past the window to count lines only in files up to this size. */
  countLinesUpTo: number;
  size: number;
  /** Checked between chunks; throws what it likes. */
  checkAbort: () => void;
}

export interface LineWindow {
  content: Buffer;
  lines_returned: number;
  /** Present when the whole file was scanned. */
  total_lines?: number;
  /** The byte limit cut the window short (possibly inside a long line). */
  truncated: boolean;
  /** Lines remain after the returned ones; read on from here. */
  next_offset?: number;
}

const CHUNK = 64 * 1024;

export async function readLineWindow(handle: FileHandle, opts: LineWindowOptions): Promise<LineWindow> {
  const end = opts.limit === undefined ? Number.POSITIVE_INFINITY : opts.offset + opts.limit;
  const out: Buffer[] = [];
  let outBytes = 0;
  let returned = 0;
  let truncated = false;
  let line = 0; // index of the line being read
  let cur: Buffer[] = []; // bytes of the current line, when it is inside the window
  let curBytes = 0;
  let curHasBytes = false; // the current line has at least one byte (so a final line without \n counts)
  let windowDone = false;
  const countAll = opts.size <= opts.countLinesUpTo;
  const buf = Buffer.allocUnsafe(CHUNK);
  let position = 0;
  let eof = false;

  const commit = (): boolean => {
    const lineBuf = cur.length === 1 ? cur[0]! : Buffer.concat(cur);
    cur = [];
    curBytes = 0;
    if (outBytes + lineBuf.length > opts.maxBytes) {
      truncated = true;
      if (returned === 0) {
        // One line longer than the limit: return its start rather than nothing.
        const part = utf8Prefix(lineBuf, opts.maxBytes);
        out.push(part);
        outBytes += part.length;
        returned = 1;
      }
      return false;
    }
    out.push(lineBuf);
    outBytes += lineBuf.length;
    returned++;
    return true;
  };

  while (!eof) {
    opts.checkAbort();
    const { bytesRead } = await handle.read(buf, 0, CHUNK, position);
    if (bytesRead === 0) {
      eof = true;
      break;
    }
    position += bytesRead;
    const chunk = buf.subarray(0, bytesRead);
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(10, start);
      const segEnd = nl === -1 ? chunk.length : nl + 1;
      curHasBytes = true;
      const inWindow = !windowDone && line >= opts.offset && line < end;
      if (inWindow) {
        // Copy: `buf` is reused for the next read.
        cur.push(Buffer.from(chunk.subarray(start, segEnd)));
        curBytes += segEnd - start;
        if (curBytes > opts.maxBytes && nl === -1) {
          // A line too long to hold: stop reading it now instead of buffering all of it.
          commit();
          windowDone = true;
        }
      }
      if (nl === -1) break;
      if (inWindow && !windowDone && !commit()) windowDone = true;
      line++;
      curHasBytes = false;
      if (line >= end) windowDone = true;
      start = segEnd;
    }
    if (windowDone && !countAll) break;
  }

  let total: number | undefined;
  if (eof) {
    if (curHasBytes) {
      // The last line has no "\n" but is a line all the same.
      if (!windowDone && line >= opts.offset && line < end && cur.length > 0) commit();
      line++;
    }
    total = line;
  }
  const window: LineWindow = { content: Buffer.concat(out), lines_returned: returned, truncated };
  if (total !== undefined) {
    window.total_lines = total;
    if (opts.offset + returned < total) window.next_offset = opts.offset + returned;
  } else {
    window.next_offset = opts.offset + returned;
  }
  return window;
}
