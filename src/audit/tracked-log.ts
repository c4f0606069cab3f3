/**
 * A log with checkpoints as its writer left it: the file as the ChainFile holds it (size, last
 * line) and, beside it, how many records it holds and which log it is. Checkpoints are written
 * from this, and every check before a write (changes.ts) compares the file on disk against it.
 */
import type { FileHandle } from 'node:fs/promises';
import type { ChainFile } from './chain-file.ts';
import { type Checkpoint, type CheckpointKind, newLogId } from './checkpoint.ts';
import type { Survey } from './continuity.ts';
import type { AuditEntry } from './record.ts';

export class TrackedLog {
  readonly file: ChainFile;
  /** organism.name, named by the identity record and every checkpoint. */
  readonly organism: string;
  /** Lines in the log as this writer knows it. */
  records = 0;
  logId = '';

  constructor(file: ChainFile, organism: string) {
    this.file = file;
    this.organism = organism;
  }

  /** Appends through the file; returns how many records that added. */
  async append(handle: FileHandle, entries: AuditEntry[], lead: string): Promise<number> {
    const added = await this.file.append(handle, entries, lead);
    this.records += added;
    return added;
  }

  /** Takes the file as found as the state to chain onto. */
  adopt(found: Survey, size: number): void {
    this.records = found.records;
    this.logId = found.identity?.record.log_id ?? this.logId;
    this.file.chainOnto(found.head, size);
  }

  /** A new log in the empty file at the path. */
  start(): void {
    this.logId = newLogId();
    this.records = 0;
    this.file.chainOnto(undefined, 0);
  }

  /** The log's identity record; `adopted` records before it are not covered by its checkpoints. */
  identity(adopted: number): AuditEntry {
    return {
      type: 'log',
      time: new Date().toISOString(),
      organism: this.organism,
      log_id: this.logId,
      adopted,
    };
  }

  /** A checkpoint of the log as this writer left it. */
  fields(
    kind: CheckpointKind,
    detail: string | null,
    changed: string | undefined,
  ): Omit<Checkpoint, 'type' | 'seq' | 'time'> {
    return {
      kind,
      organism: this.organism,
      log: this.file.path,
      log_id: this.logId,
      records: this.records,
      bytes: Math.max(0, this.file.size),
      head: this.file.head?.hash ?? null,
      changed: changed ?? null,
      by: null,
      detail,
    };
  }
}
