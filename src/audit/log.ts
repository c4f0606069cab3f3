/**
 * The append-only audit log writer. `append` only queues (the bus never waits on the disk); a single
 * writer drains the queue in order, in batches (records that follow a write within `gatherMs` wait
 * that long to share the next one; flush() does not wait). If the disk refuses a write, the records stay queued,
 * the failure is reported loudly on stderr, and the write is retried: nothing is dropped quietly.
 * The chain is computed at write time from the file's actual last line, so another process that
 * appended in between (say `organism tools call` next to the daemon) does not break it.
 * With `keys`, every line is sealed with the keyring's current key (chain.ts). When the last line
 * is sealed with an older key of the ring (the key was rotated), an `audit.key_rotated` record
 * sealed with that older key comes first, naming the new one; when it names a key this process
 * does not know (another process rotated), the key file is read again.
 *
 * With `checkpoints` (the daemon and `organism tools call`), the log also has an identity and
 * checkpoints kept outside it (checkpoint.ts), and the writer never chains silently over a log that
 * changed under it: see continuity.ts for what counts as a known writer's append, and #changed.
 */

import type { Stats } from 'node:fs';
import { type FileHandle, mkdir, open, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { schemaDefault } from '../config/schema.ts';
import { AuditError } from '../errors.ts';
import { BackgroundWriter } from '../storage/background-writer.ts';
import { type ChainHead, chainHead, lineKeyId, sealLine } from './chain.ts';
import { type Checkpoint, type CheckpointKind, CheckpointStore, newLogId } from './checkpoint.ts';
import { checkAppended, endsWithLine, lineEndingAt, type Survey, surveyLog } from './continuity.ts';
import type { AuditKey, AuditKeyring } from './key.ts';
import type { AuditEntry, ChangeRecord, ThreatRecord } from './record.ts';
import { endsWithNewline, lastLine } from './tail.ts';
import { WriterLock } from './writer-lock.ts';

export interface AuditLogOptions {
  /** Absolute path of the JSON-lines file. */
  path: string;
  /** Where loud failures go; stderr by default. */
  onError?: (message: string) => void;
  /** Wait before the first retry of a failed write (ms); doubles on each failure, up to 30 s. */
  retryMs?: number;
  /** The audit keys (key.ts); without them lines are unkeyed, which verify does not accept as proof. */
  keys?: AuditKeyring;
  /**
   * Records that come within this many ms of the last write share the next write (ms; 0 writes
   * each at once). A record after a quiet spell is written at once; flush() and close() never wait.
   */
  gatherMs?: number;
  /** Identity and checkpoints (needs `keys`); without them the log is a plain keyed chain. */
  checkpoints?: AuditCheckpointOptions;
}

/** `audit.on_change`: what the runtime does when the log changed under its writer. */
export type OnAuditChange = 'refuse' | 'warn';

export interface AuditCheckpointOptions {
  /** The checkpoint file (checkpointFile()). */
  file: string;
  /** organism.name, written in the log's identity record and every checkpoint. */
  organism: string;
  /** A checkpoint after this many records (audit.checkpoint_every). */
  everyRecords?: number;
  /** ...or this long after a record that no checkpoint covers yet (audit.checkpoint_interval_ms). */
  intervalMs?: number;
  /** refuse: tool calls are refused until an operator acknowledges; warn: only the threat record and the error. */
  onChange?: OnAuditChange;
  /**
   * Where a change found (level error) and its acknowledgement (info) are told, in words (the
   * daemon's logger); by default the log's onError.
   */
  report?: (level: 'error' | 'info', message: string) => void;
  /** How often a writer that refuses looks for an operator's acknowledgement (ms). */
  pollMs?: number;
}

export function defaultAuditCheckpointOptions(): Required<
  Omit<AuditCheckpointOptions, 'file' | 'organism' | 'report'>
> {
  return {
    everyRecords: schemaDefault<number>('audit.checkpoint_every'),
    intervalMs: schemaDefault<number>('audit.checkpoint_interval_ms'),
    onChange: schemaDefault<OnAuditChange>('audit.on_change'),
    pollMs: 1000,
  };
}

export function defaultAuditLogOptions(): Required<Omit<AuditLogOptions, 'path' | 'keys' | 'checkpoints'>> {
  return {
    onError: (message) => process.stderr.write(`[organism audit] ${message}\n`),
    retryMs: 1000,
    // Tool calls that each wait on I/O (an MCP server's, a model's) come one per event-loop turn, so
    // without gathering each is its own stat + append with its callbacks on the daemon's thread:
    // ~90 µs of CPU per call measured (bench mcp), more than the MCP round trip it audits.
    gatherMs: 5,
  };
}

/** Where callers send entries; the dispatcher depends on this, tests may pass their own. */
export interface AuditSink {
  append(entry: AuditEntry): void;
  flush(): Promise<void>;
  close(): Promise<void>;
  /**
   * Why tool calls must be refused now (the log changed under its writer and no operator has
   * acknowledged it), or undefined. The dispatcher asks before every call.
   */
  refusal?(): string | undefined;
}

export class AuditLog implements AuditSink {
  readonly path: string;
  readonly #options: Required<Omit<AuditLogOptions, 'path' | 'keys' | 'checkpoints'>>;
  readonly #keys: AuditKeyring | undefined;
  readonly #writer: BackgroundWriter<AuditEntry>;
  #handle: FileHandle | undefined;
  #ino = -1;
  /** Size of the file after our last write, to notice appends by others. */
  #size = -1;
  /** The file's last line and its hash, as this process wrote it or last read it back. */
  #head: ChainHead | undefined;
  #warnedUnkeyed = false;
  /** With checkpoints: the state kept beside the plain chain's (see #track). */
  readonly #track: Track | undefined;

  constructor(options: AuditLogOptions) {
    this.path = options.path;
    this.#keys = options.keys;
    const { keys: _keys, checkpoints, ...rest } = options;
    this.#options = { ...defaultAuditLogOptions(), ...stripUndefined(rest) } as Required<
      Omit<AuditLogOptions, 'path' | 'keys' | 'checkpoints'>
    >;
    if (checkpoints && options.keys) {
      const onError = this.#options.onError;
      this.#track = {
        options: {
          ...defaultAuditCheckpointOptions(),
          report: (_level: string, message: string) => onError(message),
          ...stripUndefined(checkpoints),
        } as TrackOptions,
        store: new CheckpointStore(checkpoints.file, options.keys),
        opened: undefined,
        records: 0,
        logId: '',
        unchecked: 0,
        checkpointed: -1,
        closed: false,
        timer: undefined,
        changed: undefined,
        poll: undefined,
        checkpointSize: -1,
        serial: Promise.resolve(),
        lock: WriterLock.supported()
          ? new WriterLock(options.path, options.keys.keys[0] as AuditKey)
          : undefined,
      };
    }
    const { onError, retryMs, gatherMs } = this.#options;
    this.#writer = new BackgroundWriter<AuditEntry>({
      gatherMs,
      write: (batch) => this.#exclusive(() => this.#write(batch)),
      afterFailure: () => this.#dropHandle(),
      retryDelayMs: (failures) => Math.min(30_000, retryMs * 2 ** Math.min(failures - 1, 15)),
      onError,
      failedMessage: (error, pending, wait) =>
        `CANNOT WRITE AUDIT LOG ${this.path}: ${error.message}. ${pending} record(s) kept in memory; retrying in ${wait} ms`,
      recoveredMessage: () => `audit log ${this.path} is writable again; queued records written`,
      flushError: (pending) =>
        new AuditError(
          'audit.write',
          `cannot write the audit log ${this.path}; ${pending} record(s) still queued`,
          {
            path: this.path,
            pending,
          },
        ),
      // A record that arrives late is still written: the audit log must not lose one.
      writeAfterClose: true,
    });
  }

  /** Records waiting to be written. */
  get pending(): number {
    return this.#writer.pending;
  }

  /** The checkpoint file, when the log keeps checkpoints. */
  get checkpointFile(): string | undefined {
    return this.#track?.store.file;
  }

  append(entry: AuditEntry): void {
    if (this.#writer.closed) {
      this.#options.onError(
        `record for ${'tool' in entry ? entry.tool : entry.type} arrived after the audit log was closed; writing it anyway`,
      );
    }
    this.#writer.push(entry);
  }

  /**
   * Checks the log against its last checkpoint now (the daemon and `tools call` do, before the
   * first call, so a log cut while nothing ran is found at start); the first write does otherwise.
   */
  async open(): Promise<void> {
    const track = this.#track;
    if (track) await this.#exclusive(() => this.#opened(track));
  }

  refusal(): string | undefined {
    const track = this.#track;
    if (!track || track.changed === undefined || track.options.onChange !== 'refuse') return undefined;
    return `the audit log changed under the runtime (${track.changed}); tool calls are refused until an operator checks it (organism audit --verify) and runs organism audit --acknowledge`;
  }

  /** Resolves when every record queued so far is on disk; rejects with AuditError if the disk refuses. */
  flush(): Promise<void> {
    return this.#writer.flush();
  }

  async close(): Promise<void> {
    try {
      await this.#writer.close();
      const track = this.#track;
      if (track) {
        clearTimeout(track.timer);
        clearInterval(track.poll);
        await this.#exclusive(async () => {
          if (track.opened === undefined || track.closed) return;
          track.closed = true;
          // Whatever the log holds now (other writers' records too) is checkpointed before leaving.
          await this.#writeTracked(track, []);
          if (track.records !== track.checkpointed) await this.#checkpoint('close');
        });
        await track.lock?.close();
      }
    } finally {
      await this.#dropHandle();
    }
  }

  /**
   * Writes the log's identity and an `acknowledged` checkpoint that accepts the log as it is now
   * (`organism audit --acknowledge`), after a `change` record saying who and why. A log that is
   * gone is acknowledged as gone: the next writer starts a new one.
   */
  async acknowledge(by: string, reason: string): Promise<{ was: string | null; checkpoint: Checkpoint }> {
    const track = this.#track;
    if (!track) throw new AuditError('audit.write', 'acknowledging needs the audit key and checkpoints');
    return this.#exclusive(async () => {
      const before = await track.store.latest().catch(() => undefined);
      const was = before?.checkpoint.changed ?? null;
      const info = await statOrUndefined(this.path);
      if (!info || info.size === 0) {
        track.records = 0;
        track.logId = '';
        const checkpoint = await track.store.append({
          ...this.#fields('acknowledged', `${reason} (the log was gone)`),
          by,
          changed: null,
        });
        return { was, checkpoint };
      }
      const handle = await this.#openHandle();
      const found = await surveyLog(handle, info.size);
      this.#adopt(found, info.size);
      const entries: AuditEntry[] = [];
      if (found.identity === undefined) {
        track.logId = newLogId();
        entries.push(this.#identity(found.records));
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
      await this.#append(handle, entries, await this.#lead(handle));
      await handle.datasync();
      track.changed = undefined;
      const checkpoint = await track.store.append({
        ...this.#fields('acknowledged', reason),
        by,
        changed: null,
      });
      track.unchecked = 0;
      return { was, checkpoint };
    });
  }

  async #dropHandle(): Promise<void> {
    const handle = this.#handle;
    this.#handle = undefined;
    await handle?.close().catch(() => {});
  }

  /** Runs `work` after whatever write or checkpoint is under way (the timer's checkpoints too). */
  #exclusive<T>(work: () => Promise<T>): Promise<T> {
    const track = this.#track;
    if (!track) return work();
    const lock = track.lock;
    const run = track.serial.then(async () => {
      await lock?.acquire();
      try {
        return await work();
      } finally {
        lock?.release();
      }
    });
    track.serial = run.then(
      () => {},
      () => {},
    );
    return run;
  }

  async #openHandle(): Promise<FileHandle> {
    await this.#handle?.close().catch(() => {});
    await mkdir(dirname(this.path), { recursive: true });
    this.#handle = await open(this.path, 'a+', 0o600);
    this.#ino = (await this.#handle.stat()).ino;
    return this.#handle;
  }

  async #write(batch: AuditEntry[]): Promise<void> {
    if (this.#track) return this.#writeTracked(this.#track, batch);
    let info = await statOrUndefined(this.path);
    if (!this.#handle || !info || info.ino !== this.#ino) {
      await this.#openHandle();
      info = await (this.#handle as unknown as FileHandle).stat();
      this.#size = -1;
    }
    const handle = this.#handle as unknown as FileHandle;
    // The path's inode is the open handle's, so the path's stat is the handle's size too: one file
    // system round trip less per batch (a batch per call when calls wait on I/O, as MCP calls do).
    const size = info.size;
    // Someone else appended (or this is our first write): chain onto what is actually there. When
    // the size is ours, the last line is the one this process wrote, kept with its hash.
    let lead = '';
    if (size !== this.#size) {
      this.#head = chainHead(await lastLine(handle, size));
      this.#size = size;
      // A line cut short by a crash must not swallow ours: start on a fresh line (verify names it).
      if (size > 0 && !(await endsWithNewline(handle, size))) lead = '\n';
    }
    await this.#append(handle, batch, lead);
  }

  /** Seals `entries` after the head (a key switch record first when due) and appends them in one write. */
  async #append(handle: FileHandle, entries: AuditEntry[], lead: string): Promise<void> {
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
    // One buffer, written as is: its length is what the file grew by (no second pass to count).
    const bytes = Buffer.from(text, 'utf8');
    for (let done = 0; done < bytes.length; ) {
      done += (await handle.write(bytes, done, bytes.length - done)).bytesWritten;
    }
    this.#head = head;
    this.#size += bytes.length;
    if (this.#track) {
      // A lead newline ends a line already counted (surveyLog counts a cut last line).
      const added = entries.length + (rotation ? 1 : 0);
      this.#track.records += added;
      this.#track.unchecked += added;
    }
  }

  /** The write with checkpoints: the file must be what this writer left, plus known writers' appends. */
  async #writeTracked(track: Track, batch: AuditEntry[]): Promise<void> {
    await this.#opened(track);
    const info = await statOrUndefined(this.path);
    // A handle dropped after a failed write (or at close) is reopened when the path is still its file.
    if (!this.#handle && info && info.ino === this.#ino) await this.#openHandle();
    let prefix: AuditEntry[] = [];
    if (!this.#handle || !info || info.ino !== this.#ino) {
      prefix = await this.#replaced(track, info);
    } else if (info.size !== this.#size) {
      prefix = await this.#grown(track, this.#handle, info.size);
    }
    const handle = this.#handle as unknown as FileHandle;
    await this.#append(handle, [...prefix, ...batch], prefix.length > 0 ? await this.#lead(handle) : '');
    if (prefix.some((entry) => entry.type === 'threat')) await this.#checkpoint('changed');
    else if (track.unchecked >= track.options.everyRecords) await this.#checkpoint('checkpoint');
    else this.#armCheckpoint(track);
  }

  /** A newline first when the file ends with a line cut short (a crash), so ours start on their own. */
  async #lead(handle: FileHandle): Promise<string> {
    return this.#size > 0 && !(await endsWithNewline(handle, this.#size)) ? '\n' : '';
  }

  /** The log at the path is gone or another file: start a new log, or take the file found. */
  async #replaced(track: Track, info: Stats | undefined): Promise<AuditEntry[]> {
    const had = `${track.records} records (${this.#size} bytes)`;
    const handle = await this.#openHandle();
    const size = (await handle.stat()).size;
    if (size === 0) {
      this.#startLog(track);
      return [
        this.#identity(0),
        this.#threat(
          `${this.path} was ${info ? 'replaced by an empty file' : 'deleted'} while this writer had it open with ${had}; a new log starts here`,
        ),
      ];
    }
    const found = await surveyLog(handle, size);
    this.#adopt(found, size);
    return [
      this.#threat(
        `${this.path} was replaced by another file (${found.records} records${found.identity ? `, log id ${found.identity.record.log_id} of organism ${found.identity.record.organism}` : ''}) while this writer had it open with ${had}`,
      ),
    ];
  }

  /** The log's size is not the one this writer left: shorter, or grown by someone; which? */
  async #grown(track: Track, handle: FileHandle, size: number): Promise<AuditEntry[]> {
    let reason: string | undefined;
    if (size === 0) {
      this.#startLog(track);
      return [
        this.#identity(0),
        this.#threat(
          `${this.path} was emptied while this writer had it open with ${track.records} records (${this.#size} bytes); a new log starts here`,
        ),
      ];
    }
    if (size < this.#size) {
      reason = `${this.path} is ${this.#size - size} bytes shorter than the ${this.#size} this writer left after record ${track.records}: records were cut`;
    } else if (this.#head !== undefined && !(await endsWithLine(handle, this.#size, this.#head.line))) {
      reason = `record ${track.records} of ${this.path}, the last this writer wrote, is no longer at byte ${this.#size}: records before it were cut or changed`;
    } else {
      const appended = await checkAppended(
        handle,
        this.#size,
        size,
        this.#head,
        track.records,
        this.#keyMap(),
      );
      if (appended.ok) {
        track.records += appended.added;
        this.#head = appended.head;
        this.#size = size;
        return [];
      }
      reason = `${this.path} grew by lines no writer with the audit key wrote: ${appended.reason}`;
    }
    this.#adopt(await surveyLog(handle, size), size);
    return [this.#threat(reason)];
  }

  /** Once per writer: the log against its last checkpoint (see #open). */
  async #opened(track: Track): Promise<void> {
    track.opened ??= this.#open(track);
    try {
      await track.opened;
    } catch (error) {
      track.opened = undefined;
      throw error;
    }
  }

  /** Writes what the log needs first (its identity, a threat record) and a checkpoint of it. */
  async #open(track: Track): Promise<void> {
    let latest: Checkpoint | undefined;
    let unreadable: string | undefined;
    try {
      latest = (await track.store.latest())?.checkpoint;
    } catch (error) {
      unreadable = (error as Error).message;
    }
    const handle = await this.#openHandle();
    const size = (await handle.stat()).size;
    this.#size = size;
    this.#head = undefined;
    track.changed = latest?.changed ?? undefined;
    const entries: AuditEntry[] = [];
    let kind: CheckpointKind | undefined;
    const found = async () => {
      const survey = await surveyLog(handle, size);
      this.#adopt(survey, size);
      return survey;
    };
    if (unreadable !== undefined) {
      await found();
      entries.push(this.#threat(unreadable));
    } else if (latest === undefined) {
      if (size === 0) {
        this.#startLog(track);
        entries.push(this.#identity(0));
        kind = 'start';
      } else {
        const survey = await found();
        if (survey.identity) {
          entries.push(
            this.#threat(
              `${this.path} names log id ${survey.identity.record.log_id} of organism ${survey.identity.record.organism}, but ${track.store.file} holds no checkpoint of it: the checkpoints were deleted, the project moved, or the log was copied here`,
            ),
          );
        } else {
          // A log from before identity records: it gets one now (records before it are not covered).
          track.logId = newLogId();
          entries.push(this.#identity(survey.records));
          kind = 'start';
        }
      }
    } else if (size === 0) {
      this.#startLog(track);
      entries.push(this.#identity(0));
      kind = 'start';
      if (latest.records > 0) {
        entries.push(
          this.#threat(
            `${this.path} is gone or empty, but checkpoint ${latest.seq} (${latest.time}) says it held ${latest.records} records (log id ${latest.log_id}); a new log starts here`,
          ),
        );
      }
    } else {
      const reason = await this.#againstCheckpoint(track, handle, size, latest);
      if (reason !== undefined) {
        await found();
        entries.push(this.#threat(reason));
      }
    }
    if (track.changed !== undefined && track.options.onChange === 'refuse') this.#startPolling(track);
    if (entries.length === 0) return;
    await this.#append(handle, entries, await this.#lead(handle));
    await this.#checkpoint(entries.some((e) => e.type === 'threat') ? 'changed' : (kind ?? 'checkpoint'));
  }

  /** Why the log is not what checkpoint `cp` saw plus known writers' appends, or undefined. */
  async #againstCheckpoint(
    track: Track,
    handle: FileHandle,
    size: number,
    cp: Checkpoint,
  ): Promise<string | undefined> {
    const at = `checkpoint ${cp.seq} (${cp.time})`;
    if (cp.records === 0 || cp.head === null) {
      return `${this.path} holds records, but ${at} says there was no log (acknowledged as gone): it was put back or copied here`;
    }
    if (size < cp.bytes) {
      return `${this.path} is ${size} bytes, shorter than the ${cp.bytes} bytes and ${cp.records} records of ${at}: records were cut from its end, or it is an older copy`;
    }
    const head = await lineEndingAt(handle, cp.bytes, cp.head);
    if (!head) {
      return `record ${cp.records} of ${this.path} (ending at byte ${cp.bytes}) is not the one ${at} sealed: records were cut or changed, or the log was replaced`;
    }
    const appended = await checkAppended(handle, cp.bytes, size, head, cp.records, this.#keyMap());
    if (!appended.ok) return `${this.path} changed after ${at}: ${appended.reason}`;
    track.logId = cp.log_id;
    track.records = cp.records + appended.added;
    track.unchecked = appended.added;
    track.checkpointed = cp.records;
    this.#head = appended.head;
    this.#size = size;
    if (appended.added > 0) this.#armCheckpoint(track);
    return undefined;
  }

  /** Takes the file as found as the state to chain onto. */
  #adopt(found: Survey, size: number): void {
    const track = this.#track as Track;
    track.records = found.records;
    track.logId = found.identity?.record.log_id ?? track.logId;
    this.#head = found.head;
    this.#size = size;
  }

  /** A new log in the empty file at the path. */
  #startLog(track: Track): void {
    track.logId = newLogId();
    track.records = 0;
    this.#head = undefined;
    this.#size = 0;
  }

  #identity(adopted: number): AuditEntry {
    const track = this.#track as Track;
    return {
      type: 'log',
      time: new Date().toISOString(),
      organism: track.options.organism,
      log_id: track.logId,
      adopted,
    };
  }

  /** A threat record for a change found; the runtime refuses calls from now on (unless on_change: warn). */
  #threat(reason: string): ThreatRecord {
    const track = this.#track as Track;
    track.changed ??= reason.slice(0, 1000);
    if (track.options.onChange === 'refuse') this.#startPolling(track);
    this.#report('error', `AUDIT LOG CHANGED: ${reason}`);
    return {
      type: 'threat',
      time: new Date().toISOString(),
      kind: 'audit_log',
      tool: '',
      reason,
      module: null,
    };
  }

  #fields(kind: CheckpointKind, detail: string | null): Omit<Checkpoint, 'type' | 'seq' | 'time'> {
    const track = this.#track as Track;
    return {
      kind,
      organism: track.options.organism,
      log: this.path,
      log_id: track.logId,
      records: track.records,
      bytes: Math.max(0, this.#size),
      head: this.#head?.hash ?? null,
      changed: track.changed ?? null,
      by: null,
      detail,
    };
  }

  /** Writes a checkpoint of the log as this writer left it; a failure is reported, never thrown. */
  async #checkpoint(kind: CheckpointKind): Promise<void> {
    const track = this.#track as Track;
    clearTimeout(track.timer);
    track.timer = undefined;
    try {
      // A checkpoint promises records that are on disk: never one ahead of the log after a crash.
      await this.#handle?.datasync();
      const written = await track.store.append(this.#fields(kind, null));
      // Another writer's open change stays open until acknowledged (checkpoint.ts carries it).
      if (written.changed !== null && track.changed === undefined) {
        track.changed = written.changed;
        if (track.options.onChange === 'refuse') this.#startPolling(track);
      }
      track.unchecked = 0;
      track.checkpointed = written.records;
    } catch (error) {
      this.#options.onError(
        `cannot write the audit checkpoint ${track.store.file}: ${(error as Error).message}; retrying with the next records`,
      );
    }
  }

  #armCheckpoint(track: Track): void {
    if (track.timer !== undefined || track.unchecked === 0) return;
    track.timer = setTimeout(() => {
      track.timer = undefined;
      void this.#exclusive(async () => {
        if (track.unchecked > 0) await this.#checkpoint('checkpoint');
      });
    }, track.options.intervalMs);
    track.timer.unref();
  }

  /** While calls are refused: notice an operator's acknowledgement (another process writes it). */
  #startPolling(track: Track): void {
    if (track.poll !== undefined) return;
    track.poll = setInterval(() => {
      void this.#exclusive(async () => {
        const size = await track.store.size();
        if (size === track.checkpointSize) return;
        track.checkpointSize = size;
        const latest = (await track.store.latest().catch(() => undefined))?.checkpoint;
        if (latest?.kind === 'acknowledged' && latest.changed === null) {
          track.changed = undefined;
          track.logId = latest.log_id;
          clearInterval(track.poll);
          track.poll = undefined;
          this.#report(
            'info',
            `audit log change acknowledged by ${latest.by ?? 'an operator'}; tool calls run again`,
          );
        }
      });
    }, track.options.pollMs);
    track.poll.unref();
  }

  #report(level: 'error' | 'info', message: string): void {
    try {
      (this.#track as Track).options.report(level, message);
    } catch {
      // The daemon's logger; a failure there must not cost the record.
    }
  }

  #keyMap(): Map<string, AuditKey> {
    return new Map((this.#keys?.keys ?? []).map((k) => [k.id, k]));
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
      this.#options.onError(
        `${this.path} holds records from before audit keys (no key_id); verify reports them as not proven. Move that log aside once so the new one is proven from its first record`,
      );
    }
    if (last !== undefined && !ring.keys.some((k) => k.id === last)) {
      await ring.refresh();
      if (!ring.keys.some((k) => k.id === last)) {
        this.#options.onError(
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

type TrackOptions = Required<Omit<AuditCheckpointOptions, 'file'>>;

/** A tracked log's state beside the chain's head and size. */
interface Track {
  options: TrackOptions;
  store: CheckpointStore;
  /** The check against the last checkpoint, once per writer. */
  opened: Promise<void> | undefined;
  /** Lines in the log as this writer knows it. */
  records: number;
  logId: string;
  /** Records this writer wrote since its last checkpoint. */
  unchecked: number;
  /** The record count of the last checkpoint this writer wrote or read. */
  checkpointed: number;
  /** close() has checkpointed: a second close does nothing more. */
  closed: boolean;
  timer: NodeJS.Timeout | undefined;
  /** The change found and not acknowledged, in words. */
  changed: string | undefined;
  poll: NodeJS.Timeout | undefined;
  checkpointSize: number;
  /** Writes and checkpoints, one at a time. */
  serial: Promise<unknown>;
  /** ...and one writer process at a time (writer-lock.ts). */
  lock: WriterLock | undefined;
}

async function statOrUndefined(path: string): Promise<Stats | undefined> {
  return stat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
