/**
 * Is the log still what its writer left? Asked once when the writer opens, against the last
 * checkpoint (a log cut, replaced or deleted while nothing ran), and before a write that finds the
 * file at the path is not the one it wrote, or not the size it left. The answer is what the log
 * needs before the batch: its identity record when a new log starts here, a threat record when
 * it changed (refusal.ts is told); after either, the writer chains onto the log as found
 * (tracked-log.ts), never silently. continuity.ts has the checks of the bytes themselves.
 */
import type { Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { type Checkpoint, type CheckpointKind, type CheckpointStore, newLogId } from './checkpoint.ts';
import { sinceCheckpoint, sinceWritten, surveyLog } from './continuity.ts';
import type { AuditEntry, ThreatRecord } from './record.ts';
import type { ChangeRefusal } from './refusal.ts';
import type { TrackedLog } from './tracked-log.ts';

export interface Opening {
  /** The file, opened. */
  handle: FileHandle;
  /** What the log needs first; none when it is the last checkpoint's plus known writers' appends. */
  entries: AuditEntry[];
  /** The checkpoint kind the entries call for, unless they hold a threat. */
  kind: CheckpointKind | undefined;
  /** The log was the last checkpoint's (`checkpointed` records) and `added` more, not checkpointed yet. */
  resumed: { checkpointed: number; added: number } | undefined;
}

export class ChangeCheck {
  readonly #log: TrackedLog;
  readonly #store: CheckpointStore;
  readonly #refusal: ChangeRefusal;

  constructor(log: TrackedLog, store: CheckpointStore, refusal: ChangeRefusal) {
    this.#log = log;
    this.#store = store;
    this.#refusal = refusal;
  }

  /** The log against its last checkpoint, as the writer opens it. */
  async opening(): Promise<Opening> {
    const log = this.#log;
    const file = log.file;
    let latest: Checkpoint | undefined;
    let unreadable: string | undefined;
    try {
      latest = (await this.#store.latest())?.checkpoint;
    } catch (error) {
      unreadable = (error as Error).message;
    }
    const handle = await file.reopen();
    const size = (await handle.stat()).size;
    file.chainOnto(undefined, size);
    this.#refusal.restore(latest?.changed);
    const entries: AuditEntry[] = [];
    let kind: CheckpointKind | undefined;
    let resumed: Opening['resumed'];
    const found = async () => {
      const survey = await surveyLog(handle, size);
      log.adopt(survey, size);
      return survey;
    };
    if (unreadable !== undefined) {
      await found();
      entries.push(this.#threat(unreadable));
    } else if (latest === undefined) {
      if (size === 0) {
        log.start();
        entries.push(log.identity(0));
        kind = 'start';
      } else {
        const survey = await found();
        if (survey.identity) {
          entries.push(
            this.#threat(
              `${file.path} names log id ${survey.identity.record.log_id} of organism ${survey.identity.record.organism}, but ${this.#store.file} holds no checkpoint of it: the checkpoints were deleted, the project moved, or the log was copied here`,
            ),
          );
        } else {
          // A log from before identity records: it gets one now (records before it are not covered).
          log.logId = newLogId();
          entries.push(log.identity(survey.records));
          kind = 'start';
        }
      }
    } else if (size === 0) {
      log.start();
      entries.push(log.identity(0));
      kind = 'start';
      if (latest.records > 0) {
        entries.push(
          this.#threat(
            `${file.path} is gone or empty, but checkpoint ${latest.seq} (${latest.time}) says it held ${latest.records} records (log id ${latest.log_id}); a new log starts here`,
          ),
        );
      }
    } else {
      const since = await sinceCheckpoint(handle, file.path, size, latest, file.keyMap());
      if (since.ok) {
        log.logId = latest.log_id;
        log.records = latest.records + since.added;
        file.chainOnto(since.head, size);
        resumed = { checkpointed: latest.records, added: since.added };
      } else {
        await found();
        entries.push(this.#threat(since.reason));
      }
    }
    return { handle, entries, kind, resumed };
  }

  /** The log at the path is gone or another file (`info`, its stat): start a new log, or take the file found. */
  async replaced(info: Stats | undefined): Promise<AuditEntry[]> {
    const log = this.#log;
    const file = log.file;
    const had = `${log.records} records (${file.size} bytes)`;
    const handle = await file.reopen();
    const size = (await handle.stat()).size;
    if (size === 0) {
      log.start();
      return [
        log.identity(0),
        this.#threat(
          `${file.path} was ${info ? 'replaced by an empty file' : 'deleted'} while this writer had it open with ${had}; a new log starts here`,
        ),
      ];
    }
    const found = await surveyLog(handle, size);
    log.adopt(found, size);
    return [
      this.#threat(
        `${file.path} was replaced by another file (${found.records} records${found.identity ? `, log id ${found.identity.record.log_id} of organism ${found.identity.record.organism}` : ''}) while this writer had it open with ${had}`,
      ),
    ];
  }

  /** The log's size is not the one this writer left: shorter, or grown by someone; which? */
  async grown(handle: FileHandle, size: number): Promise<AuditEntry[]> {
    const log = this.#log;
    const file = log.file;
    if (size === 0) {
      log.start();
      return [
        log.identity(0),
        this.#threat(
          `${file.path} was emptied while this writer had it open with ${log.records} records (${file.size} bytes); a new log starts here`,
        ),
      ];
    }
    const left = { path: file.path, size: file.size, head: file.head, records: log.records };
    const since = await sinceWritten(handle, left, size, file.keyMap());
    if (since.ok) {
      log.records += since.added;
      file.chainOnto(since.head, size);
      return [];
    }
    log.adopt(await surveyLog(handle, size), size);
    return [this.#threat(since.reason)];
  }

  /** A threat record for a change found; the runtime refuses calls from now on (unless on_change: warn). */
  #threat(reason: string): ThreatRecord {
    this.#refusal.found(reason);
    return {
      type: 'threat',
      time: new Date().toISOString(),
      kind: 'audit_log',
      tool: '',
      reason,
      module: null,
    };
  }
}
