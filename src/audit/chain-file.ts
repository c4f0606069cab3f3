/**
 * The audit log file as its one writer holds it: the open handle, and the size and last line the
 * writer left, so that a write chains on without reading the file back when nobody else appended.
 *
 * `write` is the plain log's: the chain is computed at write time from the file's actual last line,
 * so another process that appended in between (say `organism tools call` next to the daemon) does
 * not break it. A log with checkpoints is written through the tracker (tracker.ts) instead, which
 * must first know the file is still what this writer left; it reads that here (size, head, holds)
 * and, when it starts or takes over a log, says where to chain on (chainOnto).
 *
 * With keys, every line is sealed with the keyring's current key (chain.ts). When the last line
 * is sealed with an older key of the ring (the key was rotated), an `audit.key_rotated` record
 * sealed with that older key comes first, naming the new one, so verify can follow the switch;
 * when it names a key this process does not know (another process rotated), the key file is read
 * again.
 */
import { type Stats, statSync } from 'node:fs';
import { type FileHandle, mkdir, open } from 'node:fs/promises';
import { dirname } from 'node:path';
import { writeAllSync } from '../storage/write-all.ts';
import { type ChainHead, chainHead, lineKeyId, sealLine } from './chain.ts';
import type { AuditKey, AuditKeyring } from './key.ts';
import type { AuditEntry, ChangeRecord } from './record.ts';
import { endsWithNewline, lastLine } from './tail.ts';

export class ChainFile {
  readonly path: string;
  readonly #keys: AuditKeyring | undefined;
  readonly #onError: (message: string) => void;
  #handle: FileHandle | undefined;
  #ino = -1;
  /** Size of the file after our last write, to notice appends by others. */
  #size = -1;
  /** The file's last line and its hash, as this process wrote it or last read it back. */
  #head: ChainHead | undefined;
  #warnedUnkeyed = false;

  constructor(path: string, keys: AuditKeyring | undefined, onError: (message: string) => void) {
    this.path = path;
    this.#keys = keys;
    this.#onError = onError;
  }

  /** The open handle; undefined before the first write and after drop(). */
  get handle(): FileHandle | undefined {
    return this.#handle;
  }

  /** Bytes in the file as this writer left it (-1 before it knows). */
  get size(): number {
    return this.#size;
  }

  get head(): ChainHead | undefined {
    return this.#head;
  }

  /** Whether `info` (the path's stat now) is the file this writer opened. */
  holds(info: Stats | undefined): boolean {
    return info !== undefined && info.ino === this.#ino;
  }

  /**
   * The path's stat, undefined when there is no file. Synchronous, as append's write is: asked once
   * per batch, and a batch per call where calls wait on I/O (MCP calls do); a stat of a local file
   * costs a few microseconds, sending it to the thread pool and back ten to twenty times that.
   */
  stat(): Stats | undefined {
    return statSync(this.path, { throwIfNoEntry: false });
  }

  /** Opens the path (again: the handle held before is closed), creating it when missing. */
  async reopen(): Promise<FileHandle> {
    await this.#handle?.close().catch(() => {});
    await mkdir(dirname(this.path), { recursive: true });
    this.#handle = await open(this.path, 'a+', 0o600);
    this.#ino = (await this.#handle.stat()).ino;
    return this.#handle;
  }

  async drop(): Promise<void> {
    const handle = this.#handle;
    this.#handle = undefined;
    await handle?.close().catch(() => {});
  }

  /** The next record chains onto `head`, the line that ends at byte `size` (undefined: an empty log). */
  chainOnto(head: ChainHead | undefined, size: number): void {
    this.#head = head;
    this.#size = size;
  }

  /** Puts what was written on the disk (a checkpoint must never promise more than a crash leaves). */
  async sync(): Promise<void> {
    await this.#handle?.datasync();
  }

  /** The ring's keys by id, to check lines others appended. */
  keyMap(): Map<string, AuditKey> {
    return new Map((this.#keys?.keys ?? []).map((k) => [k.id, k]));
  }

  /** The plain log's write: `batch` chained onto whatever the file ends with now. */
  async write(batch: AuditEntry[]): Promise<void> {
    let info = this.stat();
    if (!this.#handle || !this.holds(info)) {
      await this.reopen();
      info = await (this.#handle as unknown as FileHandle).stat();
      this.#size = -1;
    }
    const handle = this.#handle as unknown as FileHandle;
    // The path's inode is the open handle's, so the path's stat is the handle's size too: one file
    // system round trip less per batch (a batch per call when calls wait on I/O, as MCP calls do).
    const size = (info as Stats).size;
    // Someone else appended (or this is our first write): chain onto what is actually there. When
    // the size is ours, the last line is the one this process wrote, kept with its hash.
    let lead = '';
    if (size !== this.#size) {
      this.#head = chainHead(await lastLine(handle, size));
      this.#size = size;
      // A line cut short by a crash must not swallow ours: start on a fresh line (verify names it).
      if (size > 0 && !(await endsWithNewline(handle, size))) lead = '\n';
    }
    await this.append(handle, batch, lead);
  }

  /**
   * Seals `entries` after the head (a key switch record first when due) and appends them in one
   * write; returns how many records the file grew by (a lead newline only ends a line already there).
   */
  async append(handle: FileHandle, entries: AuditEntry[], lead: string): Promise<number> {
    let head = this.#head;
    const last = head === undefined ? undefined : lineKeyId(head.line);
    const key = await this.#sealingKey(head?.line, last);
    const rotation = this.#rotation(last, key);
    let text = lead;
    if (rotation) {
      head = sealLine(rotation.entry, head, rotation.key);
      text += `${head.line}\n`;
    }
    for (const entry of entries) {
      head = sealLine(entry, head, key);
      text += `${head.line}\n`;
    }
    // One write, synchronous (see stat); what puts it on the disk (sync(), before a checkpoint)
    // stays asynchronous.
    const bytes = writeAllSync(handle.fd, text);
    this.#head = head;
    this.#size += bytes;
    return entries.length + (rotation ? 1 : 0);
  }

  /** A newline first when the file ends with a line cut short (a crash), so ours start on their own. */
  async lead(handle: FileHandle): Promise<string> {
    return this.#size > 0 && !(await endsWithNewline(handle, this.#size)) ? '\n' : '';
  }

  /**
   * The key for new lines; reads the key file again when the last line names a key (`last`, from
   * lineKeyId) not in the ring.
   */
  async #sealingKey(prevLine: string | undefined, last: string | undefined): Promise<AuditKey | undefined> {
    const ring = this.#keys;
    if (!ring) return undefined;
    if (
      last === undefined &&
      prevLine !== undefined &&
      !this.#warnedUnkeyed &&
      /"hash":"[0-9a-f]{64}"\}$/.test(prevLine)
    ) {
      this.#warnedUnkeyed = true;
      this.#onError(
        `${this.path} holds records from before audit keys (no key_id); verify reports them as not proven. Move that log aside once so the new one is proven from its first record`,
      );
    }
    if (last !== undefined && !ring.keys.some((k) => k.id === last)) {
      await ring.refresh();
      if (!ring.keys.some((k) => k.id === last)) {
        this.#onError(
          `the last record of ${this.path} is sealed with audit key ${last}, which ${ring.source} does not hold; verify will stop there until that key is configured`,
        );
      }
    }
    return ring.current;
  }

  /** When the last line is sealed with an older key of the ring: the record of the switch, sealed with it. */
  #rotation(
    last: string | undefined,
    key: AuditKey | undefined,
  ): { entry: ChangeRecord; key: AuditKey } | undefined {
    const ring = this.#keys;
    if (!ring || !key || last === undefined || last === key.id) return undefined;
    const from = ring.keys.find((k) => k.id === last);
    if (!from) return undefined;
    const entry: ChangeRecord = {
      type: 'change',
      time: new Date().toISOString(),
      action: 'audit.key_rotated',
      by: 'organism',
      listener: null,
      thread: null,
      detail: `audit key ${from.id} -> ${key.id}: records from here on are sealed with ${key.id}`,
    };
    return { entry, key: from };
  }
}
