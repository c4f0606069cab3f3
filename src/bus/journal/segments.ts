/**
 * Writing the journal's segment files (read.ts reads them back; journal.ts says what goes in them
 * and when): the line of an accepted record, which file each segment is, the one being written,
 * writing a run of lines to it, moving on to the next, and deleting one. What is written when, and
 * what may be deleted, is the journal's to decide.
 */
import { closeSync, fdatasyncSync, mkdirSync, openSync } from 'node:fs';
import { open, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { writeAllSync } from '../../storage/write-all.ts';
import type { Message } from '../message.ts';
import { type JournaledFrame, segmentName } from './read.ts';

/** An accepted message as the journal queues it until written. */
export interface Accepted {
  message: Message;
  frames: readonly JournaledFrame[];
  scope: readonly string[] | undefined;
}

/** The journal line of an accepted message (read back by read.ts). */
export function line({ message, frames, scope }: Accepted): string {
  // Ids (the runtime's own: UUIDs, base36 and base64url) and kinds need no escaping; names might.
  let text = `{"a":{"id":"${message.id}","thread":"${message.thread}","frame":"${message.frame}","from":${str(message.from)},"to":${str(message.to)},"tag":${str(message.tag)},"envelope":${JSON.stringify(message.envelope)},"kind":"${message.kind}","hop":${message.hop},"time":${message.time}`;
  if (message.frameDepth !== undefined) text += `,"frameDepth":${message.frameDepth}`;
  text += '},"f":[';
  for (let i = 0; i < frames.length; i++) {
    const [id, listener, caller, parent, depth] = frames[i]!;
    text += `${i > 0 ? ',' : ''}["${id}",${str(listener)},${str(caller)},${parent === null ? 'null' : `"${parent}"`},${depth}]`;
  }
  return scope === undefined ? `${text}]}\n` : `${text}],"s":${JSON.stringify(scope)}}\n`;
}

/** A JSON string: ids, names and tags almost never need escaping, so that case costs one test. */
function str(value: string): string {
  return NEEDS_ESCAPE.test(value) ? JSON.stringify(value) : `"${value}"`;
}
const NEEDS_ESCAPE = /["\\\u0000-\u001f\u2028\u2029]/;

export class SegmentFiles {
  readonly #dir: string;
  /** Whether files are synced (the journal's fsync mode is not `off`). */
  readonly #syncs: boolean;
  readonly #onError: (message: string) => void;
  /** Segment number -> file name: those taken over at start, and this run's. */
  readonly #files = new Map<number, string>();
  /** This run's segment n is named sequence #sequenceBase + n (after those taken over). */
  #sequenceBase = 0;
  /** The segment the open file (or the next one opened) belongs to. */
  #writing = 0;
  #fd: number | undefined;
  /** Changes whenever the open file does: a sync begun on a file closed since is not this file's. */
  #generation = 0;
  /** A write failed: its line may be on disk in part, so the next write begins on a fresh line. */
  #torn = false;

  constructor(dir: string, syncs: boolean, onError: (message: string) => void) {
    this.#dir = dir;
    this.#syncs = syncs;
    this.#onError = onError;
  }

  /**
   * At start: the files found (oldest first; segment i + 1 is files[i]), the highest sequence
   * number in their names, and the segment this run writes first.
   */
  adopt(files: readonly string[], maxSequence: number, first: number): void {
    for (const [i, name] of files.entries()) this.#files.set(i + 1, name);
    this.#sequenceBase = maxSequence - files.length;
    this.#writing = first;
  }

  /** The segment being written. */
  get writing(): number {
    return this.#writing;
  }

  /** The open file, for the journal's fsync; undefined when nothing was written since it opened one. */
  get fd(): number | undefined {
    return this.#fd;
  }

  get generation(): number {
    return this.#generation;
  }

  /** Appends the lines to the segment being written (opening its file first). Throws what the disk says. */
  write(lines: string[]): void {
    if (lines.length === 0) return;
    if (this.#fd === undefined) this.#open(this.#writing);
    // After a failure a line may have been written in part: begin on a fresh line.
    const text = this.#torn ? `\n${lines.join('')}` : lines.join('');
    writeAllSync(this.#fd!, text);
    this.#torn = false;
  }

  /** Closes the segment being written (synced first, unless fsync is off) and opens the next. */
  next(): void {
    const fd = this.#fd;
    this.#fd = undefined;
    this.#generation++;
    if (fd !== undefined) {
      if (this.#syncs) fdatasyncSync(fd);
      closeSync(fd);
    }
    this.#writing++;
    this.#open(this.#writing);
  }

  /** The disk refused a write or a sync: the file is let go (reopened by the next write). */
  lost(): void {
    this.#torn = true;
    if (this.#fd !== undefined) {
      try {
        closeSync(this.#fd);
      } catch {}
    }
    this.#fd = undefined;
    this.#generation++;
  }

  /** At close: syncs and closes the open file. True when a file was synced. */
  close(): boolean {
    const fd = this.#fd;
    this.#fd = undefined;
    if (fd === undefined) return false;
    let synced = false;
    try {
      fdatasyncSync(fd);
      synced = true;
    } catch {}
    closeSync(fd);
    return synced;
  }

  /** Deletes segment n's file; a failure other than "already gone" is reported. */
  async delete(n: number): Promise<void> {
    const file = this.#fileOf(n);
    this.#files.delete(n);
    await unlink(join(this.#dir, file)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') this.#onError(`cannot delete ${file}: ${error.message}`);
    });
  }

  /** A segment's file: taken over at start, or this run's, named after this process. */
  #fileOf(n: number): string {
    let name = this.#files.get(n);
    if (name === undefined) {
      name = segmentName(process.pid, this.#sequenceBase + n);
      this.#files.set(n, name);
    }
    return name;
  }

  #open(n: number): void {
    mkdirSync(this.#dir, { recursive: true, mode: 0o700 });
    this.#fd = openSync(join(this.#dir, this.#fileOf(n)), 'a', 0o600);
    this.#generation++;
    this.#writing = n;
    // The new name must survive a power loss too.
    if (this.#syncs) void syncDir(this.#dir);
  }
}

async function syncDir(dir: string): Promise<void> {
  try {
    const handle = await open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Not possible on every platform; the file's own sync still holds its data.
  }
}
