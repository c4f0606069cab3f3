/**
 * The bus journal: what makes a 202 a promise in the single-daemon (memory transport) mode
 * (ARCHITECTURE.md, invariant 9). Every message put on the bus is appended as an `accepted` record
 * before it is delivered, and a `handled` record follows once its handler has finished (its outputs,
 * which are messages too, were appended before that mark, so whatever the disk holds after a crash
 * is a prefix in which a handled message's outputs are never missing). At start, every accepted
 * message without a handled mark is given back, in journal order, to be queued again before new
 * work.
 *
 * Why not the thread history (src/bus/history/disk.ts): the history is a bounded view for people
 * (its oldest segments go whatever is still unhandled, `history.max_bytes: 0` turns it off, and it
 * keeps payloads, not envelopes and frames), and it is written without fsync. The journal keeps
 * exactly what is unfinished, and only that long.
 *
 * Layout in `<data_dir>/journal/`: `journal-<n>.jsonl` segments, one JSON record per line:
 *
 *   {"a":<Message>,"f":[[frame, listener, caller, parent, depth], ...],"s":[scope]}   accepted
 *   {"h":"<message id>"}                                                               handled
 *
 * `f` is the message's frame and the frames above it (what a reply needs to find its way back),
 * `s` the thread's capability scope when it has one. A run always begins a new segment; a segment
 * fills up to `segmentBytes`; the oldest segments are deleted once every message they accepted is
 * handled (oldest first, so a handled mark is never deleted while the message it marks is kept,
 * and the outputs of a message still pending are never deleted either: they come after it).
 *
 * Writes are buffered and drained by one writer: the hot path only queues the record. A record
 * accepted and handled before the writer gets to it (a quick hop) is written not at all, nor its
 * mark: if the daemon dies first, the message that sent it is not marked handled either and sends
 * it again. `fsync` says when a caller waiting in durable() is let go:
 *   - always: each caller (an injection's 202) gets an fsync of its own, begun after its records
 *             were written; records nobody waits for (a handler's outputs, handled marks) ride along.
 *   - batch:  group commit, the default: one write and one sync for every record appended since the
 *             last group began; the next group begins as soon as that sync is done (at once when the
 *             writer is idle), so the window is one fsync long: a few ms on a disk.
 *   - off:    durable() does not wait; lines are written within a tick, never synced (kill -9 loses
 *             at most the lines of that tick; power loss what the page cache held).
 * Lines are written with a plain write(2) to the page cache, on the event loop, as soon as the loop
 * turns (or at once when 256 KiB are queued, so a chain of handlers that never yields cannot pile
 * up memory), which keeps the order of the file the order of the calls; only the fsync runs on the
 * thread pool, one at a time (Redis' AOF works the same way). If the disk refuses, the lines stay
 * queued, waiters are rejected with JournalError, the failure is reported, and the write is retried
 * (after a fresh line, so a half-written line cannot swallow the next).
 */
import { fdatasync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { JournalError } from '../../errors.ts';
import type { Message } from '../message.ts';
import { type JournaledFrame, type JournalReport, type PendingMessage, readJournal } from './read.ts';
import { type Accepted, line, SegmentFiles } from './segments.ts';

export type { JournaledFrame, JournalReport, PendingMessage } from './read.ts';

export type FsyncMode = 'always' | 'batch' | 'off';

export interface JournalOptions {
  /** Folder of the segments (created 0700 if missing). */
  dir: string;
  /** When durable() resolves; see the file header. Default `batch`. */
  fsync?: FsyncMode;
  /** A segment that reaches this size is closed and the next begun. Default 64 MiB. */
  segmentBytes?: number;
  /** Where loud failures go; stderr by default. */
  onError?: (message: string) => void;
  /** Wait before retrying a failed write (ms). Default 1000. */
  retryMs?: number;
}

export function defaultJournalOptions(): Required<Omit<JournalOptions, 'dir'>> {
  return {
    fsync: 'batch',
    segmentBytes: 64 * 1024 * 1024,
    onError: (message) => process.stderr.write(`[organism journal] ${message}\n`),
    retryMs: 1000,
  };
}

/** Queued bytes that make the next append write at once instead of at the next turn of the loop. */
const WRITE_NOW_BYTES = 256 * 1024;

/** A marker in the write buffer: the lines after it go to the next segment. */
const ROTATE = null;

interface Waiter {
  upTo: number;
  resolve: () => void;
  reject: (error: Error) => void;
}

export class Journal {
  readonly dir: string;
  readonly fsync: FsyncMode;
  readonly #options: Required<JournalOptions>;
  /** Live (not yet fully handled) accepted records per closed segment; at 0 it may be deleted. */
  readonly #live = new Map<number, number>();
  /** Live records of the current segment (kept apart: it changes on every hop). */
  #currentLive = 0;
  /** Segment of each message given back at start and not yet handled (others: the caller keeps it). */
  readonly #recoveredIn = new Map<string, number>();
  /** Handled marks not yet written: one line `{"h":[ids]}` per write, after everything before it. */
  #handledIds: string[] = [];
  /** Segments whose last live message was handled, with the line count that must be durable first. */
  readonly #emptiedAt = new Map<number, number>();
  /** Ids of messages the journal held at start (handled or not): a re-run's outputs are not sent twice. */
  #earlier: Set<string> | undefined;
  #pending: PendingMessage[] = [];
  #report!: JournalReport;
  #takenOver: readonly string[] = [];

  /** Segment new records go to, and its bytes so far (counted in UTF-16 units: close enough). */
  #current = 0;
  #currentBytes = 0;
  /** The segment files: names, the open one, writing and rotating. */
  readonly #segments: SegmentFiles;
  #buffer: Array<Accepted | typeof ROTATE> = [];
  #bufferBytes = 0;
  /** Lines appended, written to the file, and made durable (synced; in `off`, written). */
  #appended = 0;
  #written = 0;
  #durable = 0;
  #waiters: Waiter[] = [];
  #immediate: NodeJS.Immediate | undefined;
  #syncing = false;
  #syncDone: Array<() => void> = [];
  #failing = false;
  #retry: NodeJS.Timeout | undefined;
  #closed = false;
  #syncs = 0;

  private constructor(options: JournalOptions) {
    this.#options = { ...defaultJournalOptions(), ...stripUndefined(options) } as Required<JournalOptions>;
    this.dir = options.dir;
    this.fsync = this.#options.fsync;
    if (!['always', 'batch', 'off'].includes(this.fsync))
      throw new RangeError('fsync must be always, batch or off');
    this.#segments = new SegmentFiles(this.dir, this.fsync !== 'off', this.#options.onError);
  }

  /** Opens (creating) the folder and reads every segment; the pending messages wait in takePending(). */
  static async open(options: JournalOptions): Promise<Journal> {
    const journal = new Journal(options);
    try {
      await mkdir(journal.dir, { recursive: true, mode: 0o700 });
      const contents = await readJournal(journal.dir);
      journal.#report = contents.report;
      journal.#takenOver = contents.files;
      journal.#pending = contents.pending;
      for (const [id, segment] of contents.segmentOf) journal.#recoveredIn.set(id, segment);
      for (const n of contents.segments) journal.#live.set(n, 0);
      for (const segment of contents.segmentOf.values())
        journal.#live.set(segment, (journal.#live.get(segment) ?? 0) + 1);
      for (const n of contents.segments) if (journal.#live.get(n) === 0) journal.#emptiedAt.set(n, 0);
      journal.#earlier = contents.ids.size > 0 ? contents.ids : undefined;
      // A run always begins a segment of its own: a torn last line is never appended to.
      journal.#current = contents.segments.length + 1;
      journal.#segments.adopt(contents.files, contents.maxSequence, journal.#current);
    } catch (error) {
      throw new JournalError(
        'journal.io',
        `cannot read the journal in ${journal.dir}: ${(error as Error).message}`,
        { dir: journal.dir },
      );
    }
    return journal;
  }

  /** What reading the journal at start found. */
  get report(): JournalReport {
    return this.#report;
  }

  /** File names of the segments of earlier runs found at start, oldest first. */
  get takenOver(): readonly string[] {
    return this.#takenOver;
  }

  /** The messages accepted and not handled before the last stop, in journal order (once). */
  takePending(): PendingMessage[] {
    const pending = this.#pending;
    this.#pending = [];
    return pending;
  }

  /** True when the journal held this message id at start: a handler run again re-made it. */
  journaledBefore(id: string): boolean {
    return this.#earlier?.has(id) === true;
  }

  /** fsyncs made so far (batch: about one per group; always: one per waiting caller; off: none). */
  get syncs(): number {
    return this.#syncs;
  }

  /** Lines not yet durable. */
  get queued(): number {
    return this.#appended - this.#durable;
  }

  /**
   * Appends an accepted message. Cheap: the record is queued as it is and turned into its line only
   * when written (a message handled before its record is written costs no line at all, see
   * #write). `frames`: the message's frame and those above it, as they are now. Returns the segment
   * it went to, for handled().
   */
  accept(message: Message, frames: readonly JournaledFrame[], scope: readonly string[] | undefined): number {
    this.#push({ message, frames, scope });
    this.#currentLive++;
    return this.#current;
  }

  /** The segment of a message given back by takePending(), for handled(); undefined if unknown. */
  recoveredSegment(id: string): number | undefined {
    return this.#recoveredIn.get(id);
  }

  /**
   * Marks a message handled (its outputs were accepted before this), once: `segment` is what
   * accept() returned (or recoveredSegment()). Only the id is queued; the marks of a write go out
   * as one line at its end.
   */
  handled(id: string, segment: number): void {
    if (this.#closed) return;
    this.#recoveredIn.delete(id);
    this.#handledIds.push(id);
    this.#appended++;
    if (!this.#failing) this.#immediate ??= setImmediate(this.#turn);
    if (segment === this.#current) {
      this.#currentLive--;
      return;
    }
    const live = (this.#live.get(segment) ?? 1) - 1;
    this.#live.set(segment, live);
    if (live === 0) this.#emptiedAt.set(segment, this.#appended);
  }

  /**
   * Resolves when every record appended so far is durable as the fsync mode promises (off: at
   * once). Rejects with JournalError while the disk refuses.
   */
  durable(): Promise<void> {
    // While the disk refuses, nothing new is promised, whatever the mode.
    if (this.#failing) return Promise.reject(this.#failure());
    if (this.fsync === 'off' || this.#durable >= this.#appended) return Promise.resolve();
    return new Promise((resolve, reject) => this.#waiters.push({ upTo: this.#appended, resolve, reject }));
  }

  /** Writes and syncs what is queued, closes the file. Later records are not written. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#immediate) clearImmediate(this.#immediate);
    this.#immediate = undefined;
    if (this.#retry) clearTimeout(this.#retry);
    this.#failing = false;
    while (this.#syncing) await new Promise<void>((resolve) => this.#syncDone.push(resolve));
    this.#write();
    if (this.#segments.close()) {
      this.#syncs++;
      this.#durable = this.#written;
    }
    this.#release();
    const failure = this.#failure();
    for (const waiter of this.#waiters.splice(0)) waiter.reject(failure);
    await this.#deleteHandled();
  }

  #push(record: Accepted): void {
    if (this.#closed) return;
    if (this.#currentBytes >= this.#options.segmentBytes) {
      // Rotation is decided here, so each accepted record knows its segment at once.
      this.#live.set(this.#current, this.#currentLive);
      if (this.#currentLive === 0) this.#emptiedAt.set(this.#current, this.#appended);
      this.#currentLive = 0;
      this.#buffer.push(ROTATE);
      this.#current++;
      this.#currentBytes = 0;
    }
    this.#buffer.push(record);
    // About the line's length: the envelope and ~200 bytes of fields.
    const bytes = record.message.envelope.length + 200;
    this.#bufferBytes += bytes;
    this.#currentBytes += bytes;
    this.#appended++;
    if (this.#failing) return;
    if (this.#bufferBytes >= WRITE_NOW_BYTES) this.#write();
    else this.#immediate ??= setImmediate(this.#turn);
  }

  /** The loop turned: write what is queued and start a sync if the mode wants one. */
  readonly #turn = (): void => {
    this.#immediate = undefined;
    this.#write();
    this.#sync();
  };

  /** Writes the whole buffer to the file now (rotating where marked). */
  #write(): void {
    if (this.#failing) return;
    const ids = this.#handledIds;
    this.#handledIds = [];
    if (this.#buffer.length === 0 && ids.length === 0) return;
    const batch = this.#buffer;
    this.#buffer = [];
    this.#bufferBytes = 0;
    // A message accepted and handled within this batch needs neither line: if the daemon dies now,
    // the message that sent it is not marked handled either (its mark comes later), runs again and
    // sends it again, with the same id.
    const handledNow = ids.length > 0 ? new Set(ids) : undefined;
    let skipped: Set<string> | undefined;
    let done = 0;
    let records = 0;
    let marksWritten = false;
    try {
      let run: string[] = [];
      for (; done < batch.length; done++) {
        const item = batch[done]!;
        if (item === ROTATE) {
          this.#segments.write(run);
          run = [];
          this.#segments.next();
          continue;
        }
        records++;
        if (handledNow?.has(item.message.id)) {
          skipped ??= new Set();
          skipped.add(item.message.id);
          continue;
        }
        run.push(line(item));
      }
      // The marks go last: after every record accepted before them (outputs before their source's mark).
      const cancelled = skipped;
      const marks = cancelled ? ids.filter((id) => !cancelled.has(id)) : ids;
      if (marks.length > 0) run.push(`{"h":${JSON.stringify(marks)}}\n`);
      this.#segments.write(run);
      marksWritten = true;
    } catch (error) {
      // Runs before the failed one are written; the failed run's records go back to the queue, and
      // the marks are kept as ids (a mark whose record was skipped is harmless on its own).
      const from = batch.lastIndexOf(ROTATE, done - 1) + 1;
      const rest = batch.slice(from);
      for (let i = from; i < done; i++) if (batch[i] !== ROTATE) records--;
      this.#buffer = rest.concat(this.#buffer);
      for (const item of this.#buffer)
        if (item !== ROTATE) this.#bufferBytes += item.message.envelope.length + 200;
      if (!marksWritten) this.#handledIds = ids.concat(this.#handledIds);
      this.#written += records;
      this.#fail(error as Error);
      return;
    }
    this.#written += records + ids.length;
    if (this.fsync === 'off') {
      this.#durable = this.#written;
      this.#release();
    }
  }

  /** One fsync at a time on the thread pool; `always`: one per waiting caller. */
  #sync(): void {
    if (this.fsync === 'off' || this.#syncing || this.#failing) return;
    // Nothing new to sync, unless (always) a caller still waits for an fsync of its own.
    if (this.#durable >= this.#written && !(this.fsync === 'always' && this.#waiters.length > 0)) return;
    const fd = this.#segments.fd;
    if (fd === undefined) {
      // Nothing was written in this run (every record cancelled out): nothing to sync.
      this.#durable = this.#written;
      this.#release();
      return;
    }
    const first = this.#waiters[0];
    const upTo = this.fsync === 'always' && first ? Math.min(first.upTo, this.#written) : this.#written;
    const generation = this.#segments.generation;
    this.#syncing = true;
    fdatasync(fd, (error) => {
      this.#syncing = false;
      for (const done of this.#syncDone.splice(0)) done();
      // A rotation meanwhile synced and closed that file itself: what was written is durable.
      if (error && generation === this.#segments.generation) {
        this.#fail(error);
        return;
      }
      this.#syncs++;
      this.#durable = Math.max(this.#durable, upTo);
      // always: this fsync answers one caller; the next one gets an fsync of its own.
      if (this.fsync === 'always') {
        const first = this.#waiters[0];
        if (first && first.upTo <= this.#durable) this.#waiters.shift()!.resolve();
      } else this.#release();
      void this.#deleteHandled();
      if (!this.#closed) this.#sync();
    });
  }

  #failure(): JournalError {
    return new JournalError('journal.io', `cannot write the bus journal in ${this.dir}`, {
      pending: this.queued,
    });
  }

  #fail(error: Error): void {
    this.#failing = true;
    this.#options.onError(
      `CANNOT WRITE THE BUS JOURNAL in ${this.dir}: ${error.message}. ${this.queued} record(s) not yet on disk; new injections are refused until it is writable; retrying in ${this.#options.retryMs} ms`,
    );
    const failure = this.#failure();
    for (const waiter of this.#waiters.splice(0)) waiter.reject(failure);
    this.#segments.lost();
    if (this.#closed) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      this.#failing = false;
      this.#write();
      if (this.#failing) return;
      this.#options.onError(`journal folder ${this.dir} is writable again; queued records written`);
      this.#sync();
    }, this.#options.retryMs);
    this.#retry.unref();
  }

  #release(): void {
    const waiters = this.#waiters;
    let i = 0;
    while (i < waiters.length && waiters[i]!.upTo <= this.#durable) i++;
    if (i === 0) return;
    for (const waiter of waiters.splice(0, i)) waiter.resolve();
  }

  /** Deletes the oldest segments once all they accepted is handled and those marks are durable. */
  async #deleteHandled(): Promise<void> {
    const oldest = [...this.#live.keys()].sort((a, b) => a - b);
    for (const n of oldest) {
      if (n >= this.#segments.writing && !this.#closed) break;
      if (n === this.#current) break;
      const emptied = this.#emptiedAt.get(n);
      if (this.#live.get(n) !== 0 || emptied === undefined || emptied > this.#durable) break;
      this.#live.delete(n);
      this.#emptiedAt.delete(n);
      await this.#segments.delete(n);
    }
  }
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
