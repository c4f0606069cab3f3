/**
 * The append-only audit log writer. `append` only queues (the bus never waits on the disk); a single
 * writer drains the queue in order, in batches (records that follow a write within `gatherMs` wait
 * that long to share the next one; flush() does not wait). If the disk refuses a write, the records stay queued,
 * the failure is reported loudly on stderr, and the write is retried: nothing is dropped quietly.
 *
 * Chaining and sealing, key rotation included, are the file's (chain-file.ts). With `checkpoints`
 * (the daemon and `organism tools call`), the log also has an identity and checkpoints kept outside
 * it, and every batch goes through the tracker (tracker.ts) so the writer never chains silently
 * over a log that changed under it; the tracker is also what refuses tool calls after such a change.
 */

import { AuditError } from '../errors.ts';
import { BackgroundWriter } from '../storage/background-writer.ts';
import { ChainFile } from './chain-file.ts';
import type { Checkpoint } from './checkpoint.ts';
import { type AuditLogOptions, trackOptions, type WriterOptions, writerOptions } from './options.ts';
import type { AuditEntry } from './record.ts';
import { LogTracker } from './tracker.ts';

export {
  type AuditCheckpointOptions,
  type AuditLogOptions,
  defaultAuditCheckpointOptions,
  defaultAuditLogOptions,
  type OnAuditChange,
} from './options.ts';

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
  readonly #options: WriterOptions;
  readonly #file: ChainFile;
  readonly #writer: BackgroundWriter<AuditEntry>;
  /** With checkpoints (and keys to seal them). */
  readonly #tracker: LogTracker | undefined;

  constructor(options: AuditLogOptions) {
    this.path = options.path;
    this.#options = writerOptions(options);
    const { onError, retryMs, gatherMs } = this.#options;
    this.#file = new ChainFile(options.path, options.keys, onError);
    const { checkpoints, keys } = options;
    const tracker =
      checkpoints && keys
        ? new LogTracker(this.#file, keys, trackOptions(checkpoints, onError), onError)
        : undefined;
    this.#tracker = tracker;
    this.#writer = new BackgroundWriter<AuditEntry>({
      gatherMs,
      write: tracker ? (batch) => tracker.write(batch) : (batch) => this.#file.write(batch),
      afterFailure: () => this.#file.drop(),
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
    return this.#tracker?.checkpointFile;
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
    await this.#tracker?.open();
  }

  refusal(): string | undefined {
    return this.#tracker?.refusal();
  }

  /** Resolves when every record queued so far is on disk; rejects with AuditError if the disk refuses. */
  flush(): Promise<void> {
    return this.#writer.flush();
  }

  async close(): Promise<void> {
    try {
      await this.#writer.close();
      await this.#tracker?.close();
    } finally {
      await this.#file.drop();
    }
  }

  /**
   * Writes the log's identity and an `acknowledged` checkpoint that accepts the log as it is now
   * (`organism audit --acknowledge`), after a `change` record saying who and why. A log that is
   * gone is acknowledged as gone: the next writer starts a new one.
   */
  async acknowledge(by: string, reason: string): Promise<{ was: string | null; checkpoint: Checkpoint }> {
    const tracker = this.#tracker;
    if (!tracker) throw new AuditError('audit.write', 'acknowledging needs the audit key and checkpoints');
    return tracker.acknowledge(by, reason);
  }
}
