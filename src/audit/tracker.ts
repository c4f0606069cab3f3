/**
 * Continuity tracking of a log with checkpoints, so that the writer never chains silently over a
 * log that changed under it and a cut is found even at the end of the log. Every write is checked
 * first (changes.ts: once against the last checkpoint when the writer opens, then against what
 * this writer left, tracked-log.ts); a change found is a threat record, a `changed` checkpoint
 * and, with on_change refuse, refused tool calls until acknowledged (refusal.ts). Checkpoints
 * follow the cadence (every N records, or T ms after a record none covers yet). Writes and
 * checkpoints go one at a time and hold the writer lock (writer-lock.ts), so writers in other
 * processes never chain onto the same line.
 *
 * The writer (log.ts) hands every batch to `write` and its end to `close`; the file is the
 * writer's ChainFile, the one interface between the two.
 */
import type { Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import type { ChainFile } from './chain-file.ts';
import { ChangeCheck } from './changes.ts';
import { type Checkpoint, type CheckpointKind, CheckpointStore, newLogId } from './checkpoint.ts';
import { surveyLog } from './continuity.ts';
import type { AuditKey, AuditKeyring } from './key.ts';
import type { TrackOptions } from './options.ts';
import type { AuditEntry } from './record.ts';
import { ChangeRefusal } from './refusal.ts';
import { TrackedLog } from './tracked-log.ts';
import { WriterLock } from './writer-lock.ts';

export class LogTracker {
  readonly #log: TrackedLog;
  readonly #options: TrackOptions;
  readonly #onError: (message: string) => void;
  readonly #store: CheckpointStore;
  /** One writer process at a time; none where the platform has no such lock. */
  readonly #lock: WriterLock | undefined;
  readonly #refusal: ChangeRefusal;
  readonly #check: ChangeCheck;
  /** Writes and checkpoints, one at a time. */
  #serial: Promise<unknown> = Promise.resolve();
  /** The check against the last checkpoint, once per writer. */
  #opened: Promise<void> | undefined;
  /** Records this writer wrote since its last checkpoint. */
  #unchecked = 0;
  /** The record count of the last checkpoint this writer wrote or read. */
  #checkpointed = -1;
  /** close() has checkpointed: a second close does nothing more. */
  #closed = false;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    file: ChainFile,
    keys: AuditKeyring,
    options: TrackOptions,
    onError: (message: string) => void,
  ) {
    this.#log = new TrackedLog(file, options.organism);
    this.#options = options;
    this.#onError = onError;
    this.#store = new CheckpointStore(options.file, keys);
    this.#lock = WriterLock.supported() ? new WriterLock(file.path, keys.keys[0] as AuditKey) : undefined;
    this.#refusal = new ChangeRefusal({
      options,
      store: this.#store,
      exclusive: (work) => this.#exclusive(work),
      acknowledged: (checkpoint) => {
        this.#log.logId = checkpoint.log_id;
      },
    });
    this.#check = new ChangeCheck(this.#log, this.#store, this.#refusal);
  }

  get checkpointFile(): string {
    return this.#store.file;
  }

  refusal(): string | undefined {
    return this.#refusal.refusal();
  }

  /** The check against the last checkpoint now, rather than at the first write. */
  open(): Promise<void> {
    return this.#exclusive(() => this.#ensureOpened());
  }

  write(batch: AuditEntry[]): Promise<void> {
    return this.#exclusive(() => this.#write(batch));
  }

  /** After the writer's queue is drained: checkpoints what the log holds, then lets the lock go. */
  async close(): Promise<void> {
    clearTimeout(this.#timer);
    this.#refusal.stop();
    await this.#exclusive(async () => {
      if (this.#opened === undefined || this.#closed) return;
      this.#closed = true;
      // Whatever the log holds now (other writers' records too) is checkpointed before leaving.
      await this.#write([]);
      if (this.#log.records !== this.#checkpointed) await this.#checkpoint('close');
    });
    await this.#lock?.close();
  }

  /** See AuditLog.acknowledge. */
  acknowledge(by: string, reason: string): Promise<{ was: string | null; checkpoint: Checkpoint }> {
    return this.#exclusive(async () => {
      const log = this.#log;
      const before = await this.#store.latest().catch(() => undefined);
      const was = before?.checkpoint.changed ?? null;
      const info = log.file.stat();
      if (!info || info.size === 0) {
        log.records = 0;
        log.logId = '';
        const checkpoint = await this.#store.append({
          ...this.#fields('acknowledged', `${reason} (the log was gone)`),
          by,
          changed: null,
        });
        return { was, checkpoint };
      }
      const handle = await log.file.reopen();
      const found = await surveyLog(handle, info.size);
      log.adopt(found, info.size);
      const entries: AuditEntry[] = [];
      if (found.identity === undefined) {
        log.logId = newLogId();
        entries.push(log.identity(found.records));
      }
      entries.push({
        type: 'change',
        time: new Date().toISOString(),
        action: 'audit.acknowledged',
        by,
        listener: null,
        thread: null,
        detail: `${reason}${was ? ` (acknowledged: ${was})` : ''}`.slice(0, 2000),
      });
      await this.#append(handle, entries, await log.file.lead(handle));
      await handle.datasync();
      this.#refusal.clear();
      const checkpoint = await this.#store.append({
        ...this.#fields('acknowledged', reason),
        by,
        changed: null,
      });
      this.#unchecked = 0;
      return { was, checkpoint };
    });
  }

  /** Runs `work` after whatever write or checkpoint is under way (the timer's checkpoints too). */
  #exclusive<T>(work: () => Promise<T>): Promise<T> {
    const lock = this.#lock;
    const run = this.#serial.then(async () => {
      await lock?.acquire();
      try {
        return await work();
      } finally {
        lock?.release();
      }
    });
    this.#serial = run.then(
      () => {},
      () => {},
    );
    return run;
  }

  async #append(handle: FileHandle, entries: AuditEntry[], lead: string): Promise<void> {
    this.#unchecked += await this.#log.append(handle, entries, lead);
  }

  /** The file must be what this writer left, plus known writers' appends. */
  async #write(batch: AuditEntry[]): Promise<void> {
    const file = this.#log.file;
    await this.#ensureOpened();
    const info = file.stat();
    // A handle dropped after a failed write (or at close) is reopened when the path is still its file.
    if (!file.handle && file.holds(info)) await file.reopen();
    let prefix: AuditEntry[] = [];
    if (!file.handle || !file.holds(info)) {
      prefix = await this.#check.replaced(info);
    } else if ((info as Stats).size !== file.size) {
      prefix = await this.#check.grown(file.handle, (info as Stats).size);
    }
    const handle = file.handle as unknown as FileHandle;
    await this.#append(handle, [...prefix, ...batch], prefix.length > 0 ? await file.lead(handle) : '');
    if (prefix.some((entry) => entry.type === 'threat')) await this.#checkpoint('changed');
    else if (this.#unchecked >= this.#options.everyRecords) await this.#checkpoint('checkpoint');
    else this.#armCheckpoint();
  }

  /** Once per writer; a failed attempt is tried again by the next write. */
  async #ensureOpened(): Promise<void> {
    this.#opened ??= this.#open();
    try {
      await this.#opened;
    } catch (error) {
      this.#opened = undefined;
      throw error;
    }
  }

  /** Writes what the log needs first (its identity, a threat record) and a checkpoint of it. */
  async #open(): Promise<void> {
    const { handle, entries, kind, resumed } = await this.#check.opening();
    if (resumed) {
      this.#unchecked = resumed.added;
      this.#checkpointed = resumed.checkpointed;
      if (resumed.added > 0) this.#armCheckpoint();
    }
    this.#refusal.watch();
    if (entries.length === 0) return;
    await this.#append(handle, entries, await this.#log.file.lead(handle));
    await this.#checkpoint(entries.some((e) => e.type === 'threat') ? 'changed' : (kind ?? 'checkpoint'));
  }

  #fields(kind: CheckpointKind, detail: string | null): Omit<Checkpoint, 'type' | 'seq' | 'time'> {
    return this.#log.fields(kind, detail, this.#refusal.changed);
  }

  /** Writes a checkpoint of the log as this writer left it; a failure is reported, never thrown. */
  async #checkpoint(kind: CheckpointKind): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    try {
      // A checkpoint promises records that are on disk: never one ahead of the log after a crash.
      await this.#log.file.sync();
      const written = await this.#store.append(this.#fields(kind, null));
      // Another writer's open change stays open until acknowledged (checkpoint.ts carries it).
      this.#refusal.carried(written.changed);
      this.#unchecked = 0;
      this.#checkpointed = written.records;
    } catch (error) {
      this.#onError(
        `cannot write the audit checkpoint ${this.#store.file}: ${(error as Error).message}; retrying with the next records`,
      );
    }
  }

  #armCheckpoint(): void {
    if (this.#timer !== undefined || this.#unchecked === 0) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#exclusive(async () => {
        if (this.#unchecked > 0) await this.#checkpoint('checkpoint');
      });
    }, this.#options.intervalMs);
    this.#timer.unref();
  }
}
