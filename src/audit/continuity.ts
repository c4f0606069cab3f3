/**
 * What a writer checks before it chains onto a log it did not just write itself: that the line it
 * wrote (or a checkpoint named) is still where it left it, and that whatever was appended since is
 * a known writer's: every line sealed with one of the audit keys and chained from that line. A log
 * that is shorter, holds another line there, or grew by lines nobody with the key wrote has been
 * changed under the writer (tracker.ts then records a threat instead of chaining on in silence).
 */
import type { FileHandle } from 'node:fs/promises';
import { type ChainHead, chainHead, checkLine, sha256 } from './chain.ts';
import type { Checkpoint } from './checkpoint.ts';
import type { AuditKey } from './key.ts';
import type { LogRecord } from './record.ts';
import { readRange } from './tail.ts';

/** True when the first `size` bytes end with `line` and its newline, as a whole line. */
export async function endsWithLine(handle: FileHandle, size: number, line: string): Promise<boolean> {
  const expected = Buffer.from(`${line}\n`, 'utf8');
  const start = size - expected.length;
  if (start < 0) return false;
  const read = await readRange(handle, Math.max(0, start - 1), size);
  const own = start === 0 ? read : read.subarray(1);
  return (start === 0 || read[0] === 0x0a) && own.equals(expected);
}

/** The line that ends at byte `size` hashes to `head` (a checkpoint's), with its text. */
export async function lineEndingAt(
  handle: FileHandle,
  size: number,
  head: string,
): Promise<ChainHead | undefined> {
  // A line is rarely longer than this; a longer one is read whole below.
  let window = 64 * 1024;
  for (;;) {
    const start = Math.max(0, size - window);
    const text = (await readRange(handle, start, size)).toString('utf8');
    if (!text.endsWith('\n')) return undefined;
    const body = text.slice(0, -1);
    const cut = body.lastIndexOf('\n');
    if (cut >= 0 || start === 0) {
      const line = body.slice(cut + 1);
      return sha256(line) === head ? { line, hash: head } : undefined;
    }
    window *= 4;
  }
}

export type Appended =
  | { ok: true; added: number; head: ChainHead | undefined }
  | { ok: false; reason: string };

/**
 * Lines in bytes [from, to): each must be sealed with one of `keys` and chain from `head` (the
 * line before `from`; undefined at the start of the log). `records` is how many lines precede
 * `from`, to name lines by number.
 */
export async function checkAppended(
  handle: FileHandle,
  from: number,
  to: number,
  head: ChainHead | undefined,
  records: number,
  keys: ReadonlyMap<string, AuditKey>,
): Promise<Appended> {
  if (to <= from) return { ok: true, added: 0, head };
  const text = (await readRange(handle, from, to)).toString('utf8');
  if (!text.endsWith('\n')) {
    return { ok: false, reason: `it ends with a partial line after record ${records}` };
  }
  const lines = text.slice(0, -1).split('\n');
  let prev = head;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const check = checkLine(line, prev?.line, keys);
    if (!check.ok || check.keyId === null) {
      const why = check.ok ? 'is not sealed with an audit key' : check.reason;
      return { ok: false, reason: `record ${records + i + 1}, appended after record ${records}, ${why}` };
    }
    prev = chainHead(line);
  }
  return { ok: true, added: lines.length, head: prev };
}

/** Where a writer left the log at `path`: its size, last line and record count. */
export interface Left {
  path: string;
  size: number;
  head: ChainHead | undefined;
  records: number;
}

/**
 * The log, now `size` bytes, is what this writer left plus known writers' appends (then `added`
 * and the new head), or why not. An emptied log is the caller's: it starts a new one.
 */
export async function sinceWritten(
  handle: FileHandle,
  left: Left,
  size: number,
  keys: ReadonlyMap<string, AuditKey>,
): Promise<Appended> {
  const { path } = left;
  if (size < left.size) {
    return {
      ok: false,
      reason: `${path} is ${left.size - size} bytes shorter than the ${left.size} this writer left after record ${left.records}: records were cut`,
    };
  }
  if (left.head !== undefined && !(await endsWithLine(handle, left.size, left.head.line))) {
    return {
      ok: false,
      reason: `record ${left.records} of ${path}, the last this writer wrote, is no longer at byte ${left.size}: records before it were cut or changed`,
    };
  }
  const appended = await checkAppended(handle, left.size, size, left.head, left.records, keys);
  if (appended.ok) return appended;
  return {
    ok: false,
    reason: `${path} grew by lines no writer with the audit key wrote: ${appended.reason}`,
  };
}

/** The log at `path`, now `size` bytes, is what checkpoint `cp` saw plus known writers' appends, or why not. */
export async function sinceCheckpoint(
  handle: FileHandle,
  path: string,
  size: number,
  cp: Checkpoint,
  keys: ReadonlyMap<string, AuditKey>,
): Promise<Appended> {
  const at = `checkpoint ${cp.seq} (${cp.time})`;
  if (cp.records === 0 || cp.head === null) {
    return {
      ok: false,
      reason: `${path} holds records, but ${at} says there was no log (acknowledged as gone): it was put back or copied here`,
    };
  }
  if (size < cp.bytes) {
    return {
      ok: false,
      reason: `${path} is ${size} bytes, shorter than the ${cp.bytes} bytes and ${cp.records} records of ${at}: records were cut from its end, or it is an older copy`,
    };
  }
  const head = await lineEndingAt(handle, cp.bytes, cp.head);
  if (!head) {
    return {
      ok: false,
      reason: `record ${cp.records} of ${path} (ending at byte ${cp.bytes}) is not the one ${at} sealed: records were cut or changed, or the log was replaced`,
    };
  }
  const appended = await checkAppended(handle, cp.bytes, size, head, cp.records, keys);
  if (appended.ok) return appended;
  return { ok: false, reason: `${path} changed after ${at}: ${appended.reason}` };
}

/** What a log file holds, read whole (only when a writer adopts a log or found it changed). */
export interface Survey {
  records: number;
  head: ChainHead | undefined;
  /** Its identity record (the first `log` record), if any, and its line number. */
  identity: { record: LogRecord; line: number } | undefined;
}

export async function surveyLog(handle: FileHandle, size: number): Promise<Survey> {
  const text = (await readRange(handle, 0, size)).toString('utf8');
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  let identity: Survey['identity'];
  for (let i = 0; i < lines.length && identity === undefined; i++) {
    identity = identityOf(lines[i] as string, i + 1);
  }
  return { records: lines.length, head: chainHead(lines.at(-1)), identity };
}

/** The line's identity record, when it is one. */
export function identityOf(line: string, number: number): Survey['identity'] {
  if (!line.startsWith('{"type":"log"')) return undefined;
  try {
    const record = JSON.parse(line) as LogRecord;
    return typeof record.log_id === 'string' && typeof record.organism === 'string'
      ? { record, line: number }
      : undefined;
  } catch {
    return undefined;
  }
}
