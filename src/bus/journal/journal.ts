/**
 * The bus journal: what makes a 202 a promise in the single-daemon (memory transport) mode
 * (ARCHITECTURE.md, invariant 9). Every message put on the bus is appended as an `accepted` record
 * before it is delivered, and a `handled` record follows once its handler has finished (its outputs,
 * which are messages too, were appended before that mark, so whatever the disk holds after a crash
 * is a prefix in which a handled message's outputs are never missing). At start, every accepted
 * message without a handled mark is given back, in journal order, to be queued again before new
 * work.
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
 * Writes are buffered and drained by one writer: the hot path only stringifies and pushes a line.
 * `fsync` says when a caller waiting in durable() is let go:
 *   - always: the writer syncs (fdatasync) after every write and starts the next write at once;
 *             records appended while a sync runs share the next one (as Redis' appendfsync always).
 *   - batch:  the writer waits `batchMs` to gather records, then one write and one sync for all of
 *             them (group commit); the default.
 *   - off:    durable() does not wait; lines are written within a tick, never synced (kill -9 loses
 *             at most the lines of that tick; power loss what the page cache held).
 * If the disk refuses, the lines stay queued, waiters are rejected with JournalError, the failure is
 * reported, and the write is retried (after a fresh line, so a half-written line cannot swallow the
 * next).
 */
import { type FileHandle, mkdir, open, readdir, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { JournalError } from '../../errors.ts';
import type { Message } from '../message.ts';

export type FsyncMode = 'always' | 'batch' | 'off';

export interface JournalOptions {
  /** Folder of the segments (created 0700 if missing). */
  dir: string;
  /** When durable() resolves; see the file header. Default `batch`. */
  fsync?: FsyncMode;
  /** Group-commit window of `batch` (ms). Default 2. */
  batchMs?: number;
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
    batchMs: 2,
    segmentBytes: 64 * 1024 * 1024,
    onError: (message) => process.stderr.write(`[organism journal] ${message}\n`),
    retryMs: 1000,
  };
}

/** A frame as the journal keeps it: id, listener, caller, parent frame id, depth. */
export type JournaledFrame = [
  id: string,
  listener: string,
  caller: string,
  parent: string | null,
  depth: number,
];

/** A message accepted and not handled before the daemon stopped. */
export interface PendingMessage {
  message: Message;
  /** The message's frame first, then the frames above it. */
  frames: JournaledFrame[];
  scope: string[] | undefined;
}

export interface JournalReport {
  segments: number;
  accepted: number;
  handled: number;
  /** Accepted and never handled: given back by takePending(). */
  pending: number;
  /** 1 when the last line of the newest segment was cut short (a crash mid-write); it is skipped. */
  torn: number;
  /** Other lines that did not parse; skipped and reported. */
  corrupt: number;
  ms: number;
}

const SEGMENT = /^journal-(\d{8})\.jsonl$/;
const segmentName = (n: number) => `journal-${String(n).padStart(8, '0')}.jsonl`;

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
  /** Live (not yet fully handled) accepted records per segment; a segment at 0 may be deleted. */
  readonly #live = new Map<number, number>();
  /** Segment of each accepted, not yet handled message. */
  readonly #segmentOf = new Map<string, number>();
  /** Segments whose last live message was handled, with the line count that must be written first. */
  readonly #emptiedAt = new Map<number, number>();
  /** Ids of messages the journal held at start (handled or not): a re-run's outputs are not sent twice. */
  #earlier: Set<string> | undefined;
  #pending: PendingMessage[] = [];
  #report: JournalReport = { segments: 0, accepted: 0, handled: 0, pending: 0, torn: 0, corrupt: 0, ms: 0 };

  #current = 0;
  #currentBytes = 0;
  /** Segment the writer is writing to, and its handle. */
  #writing = 0;
  #handle: FileHandle | undefined;
  #buffer: Array<string | typeof ROTATE> = [];
  /** Lines appended (the buffer's end), and lines written and (per mode) synced. */
  #appended = 0;
  #done = 0;
  #waiters: Waiter[] = [];
  #timer: NodeJS.Timeout | undefined;
  #immediate: NodeJS.Immediate | undefined;
  #running: Promise<void> | undefined;
  #failing = false;
  #closed = false;

  private constructor(options: JournalOptions) {
    this.#options = { ...defaultJournalOptions(), ...stripUndefined(options) } as Required<JournalOptions>;
    this.dir = options.dir;
    this.fsync = this.#options.fsync;
    if (!['always', 'batch', 'off'].includes(this.fsync))
      throw new RangeError(`fsync must be always, batch or off`);
  }

  /** Opens (creating) the folder and reads every segment; the pending messages wait in takePending(). */
  static async open(options: JournalOptions): Promise<Journal> {
    const journal = new Journal(options);
    try {
      await mkdir(journal.dir, { recursive: true, mode: 0o700 });
      await journal.#read();
    } catch (error) {
      if (error instanceof JournalError) throw error;
      throw new JournalError(
        'journal.io',
        `cannot read the journal in ${journal.dir}: ${(error as Error).message}`,
        {
          dir: journal.dir,
        },
      );
    }
    return journal;
  }

  /** What reading the journal at start found. */
  get report(): JournalReport {
    return this.#report;
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

  /** Lines waiting to be written. */
  get queued(): number {
    return this.#appended - this.#done;
  }

  /** Appends an accepted message. Cheap: the line is written (and synced) by the writer later. */
  accept(message: Message, frames: readonly JournaledFrame[], scope: readonly string[] | undefined): void {
    const line =
      scope === undefined
        ? `{"a":${JSON.stringify(message)},"f":${JSON.stringify(frames)}}\n`
        : `{"a":${JSON.stringify(message)},"f":${JSON.stringify(frames)},"s":${JSON.stringify(scope)}}\n`;
    this.#push(line);
    this.#segmentOf.set(message.id, this.#current);
    this.#live.set(this.#current, (this.#live.get(this.#current) ?? 0) + 1);
  }

  /** Marks a message handled (its outputs were accepted before this). */
  handled(id: string): void {
    const segment = this.#segmentOf.get(id);
    if (segment === undefined) return;
    this.#segmentOf.delete(id);
    this.#push(`{"h":${JSON.stringify(id)}}\n`);
    const live = (this.#live.get(segment) ?? 1) - 1;
    this.#live.set(segment, live);
    if (live === 0 && segment !== this.#current) this.#emptiedAt.set(segment, this.#appended);
  }

  /**
   * Resolves when every record appended so far is durable as the fsync mode promises (off: at
   * once). Rejects with JournalError while the disk refuses.
   */
  durable(): Promise<void> {
    if (this.fsync === 'off' || this.#done >= this.#appended) return Promise.resolve();
    if (this.#failing) {
      return Promise.reject(
        new JournalError('journal.io', `cannot write the bus journal in ${this.dir}`, {
          pending: this.queued,
        }),
      );
    }
    return new Promise((resolve, reject) => this.#waiters.push({ upTo: this.#appended, resolve, reject }));
  }

  /** Writes and syncs what is queued, deletes handled segments, closes the file. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#cancelSchedule();
    while (this.#running) await this.#running;
    if (this.#buffer.length > 0) {
      this.#running = this.#drain(true);
      await this.#running;
      this.#running = undefined;
    }
    const handle = this.#handle;
    this.#handle = undefined;
    await handle?.close().catch(() => {});
  }

  #push(line: string): void {
    // After close, a late settle is not written: its message runs again after the restart.
    if (this.#closed) return;
    if (this.#currentBytes >= this.#options.segmentBytes) {
      // Rotation is decided here, so each accepted record knows its segment at once.
      if (this.#live.get(this.#current) === 0) this.#emptiedAt.set(this.#current, this.#appended);
      this.#buffer.push(ROTATE);
      this.#current++;
      this.#currentBytes = 0;
    }
    this.#buffer.push(line);
    this.#currentBytes += line.length;
    this.#appended++;
    this.#schedule();
  }

  #schedule(): void {
    if (this.#running || this.#timer || this.#immediate || this.#failing) return;
    if (this.fsync === 'batch') {
      this.#timer = setTimeout(this.#start, this.#options.batchMs);
    } else {
      this.#immediate = setImmediate(this.#start);
    }
  }

  #cancelSchedule(): void {
    if (this.#timer) clearTimeout(this.#timer);
    if (this.#immediate) clearImmediate(this.#immediate);
    this.#timer = undefined;
    this.#immediate = undefined;
  }

  readonly #start = (): void => {
    this.#timer = undefined;
    this.#immediate = undefined;
    if (this.#running || this.#buffer.length === 0) return;
    this.#running = this.#drain(this.fsync !== 'off').finally(() => {
      this.#running = undefined;
      // Lines appended while this drain ran: their turn now (the sync just taken was their window).
      if (this.#buffer.length > 0 && !this.#failing && !this.#closed) this.#start();
    });
  };

  /** Writes the whole buffer (rotating where marked), syncs it if `sync`, and lets waiters go. */
  async #drain(sync: boolean): Promise<void> {
    const batch = this.#buffer;
    this.#buffer = [];
    let written = 0;
    try {
      let run: string[] = [];
      for (const item of batch) {
        if (item === ROTATE) {
          await this.#writeRun(run, sync);
          written += run.length;
          run = [];
          await this.#nextSegment(sync);
          written++;
          continue;
        }
        run.push(item);
      }
      await this.#writeRun(run, sync);
      written += run.length;
      if (sync) await this.#handle?.datasync();
      if (this.#failing)
        this.#options.onError(`journal folder ${this.dir} is writable again; queued records written`);
      this.#failing = false;
    } catch (error) {
      this.#buffer = batch.slice(written).concat(this.#buffer);
      const rotations = batch.slice(0, written).filter((item) => item === ROTATE).length;
      this.#done += written - rotations;
      this.#fail(error as Error);
      return;
    }
    const rotations = batch.filter((item) => item === ROTATE).length;
    this.#done += batch.length - rotations;
    this.#release();
    await this.#deleteHandled();
  }

  async #writeRun(lines: string[], sync: boolean): Promise<void> {
    if (lines.length === 0) return;
    if (!this.#handle) await this.#openSegment(this.#writing, sync);
    // After a failure a line may have been written in part: begin on a fresh line.
    const text = this.#failing ? `\n${lines.join('')}` : lines.join('');
    await this.#handle!.write(text);
  }

  async #nextSegment(sync: boolean): Promise<void> {
    const handle = this.#handle;
    this.#handle = undefined;
    if (handle) {
      if (sync) await handle.datasync();
      await handle.close();
    }
    this.#writing++;
    await this.#openSegment(this.#writing, sync);
  }

  async #openSegment(n: number, sync: boolean): Promise<void> {
    this.#writing = n;
    this.#handle = await open(join(this.dir, segmentName(n)), 'a', 0o600);
    // The new name must survive a power loss too.
    if (sync) await syncDir(this.dir);
  }

  #fail(error: Error): void {
    this.#failing = true;
    const pending = this.#appended - this.#done;
    this.#options.onError(
      `CANNOT WRITE THE BUS JOURNAL in ${this.dir}: ${error.message}. ${pending} record(s) kept in memory; new injections are refused until it is writable; retrying in ${this.#options.retryMs} ms`,
    );
    const failure = new JournalError('journal.io', `cannot write the bus journal in ${this.dir}`, {
      pending,
    });
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const waiter of waiters) waiter.reject(failure);
    void this.#handle?.close().catch(() => {});
    this.#handle = undefined;
    if (this.#closed) return;
    const timer = setTimeout(() => {
      if (!this.#running) {
        this.#running = this.#drain(this.fsync !== 'off').finally(() => {
          this.#running = undefined;
          if (this.#buffer.length > 0 && !this.#closed) this.#start();
        });
      }
    }, this.#options.retryMs);
    timer.unref();
  }

  #release(): void {
    let i = 0;
    while (i < this.#waiters.length && this.#waiters[i]!.upTo <= this.#done) i++;
    if (i === 0) return;
    const ready = this.#waiters.splice(0, i);
    for (const waiter of ready) waiter.resolve();
  }

  /** Deletes the oldest segments once all they accepted is handled and those marks are written. */
  async #deleteHandled(): Promise<void> {
    const oldest = [...this.#live.keys()].sort((a, b) => a - b);
    for (const n of oldest) {
      if (n >= this.#writing) break;
      const emptied = this.#emptiedAt.get(n);
      if (this.#live.get(n) !== 0 || emptied === undefined || emptied > this.#done) break;
      await unlink(join(this.dir, segmentName(n))).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT')
          this.#options.onError(`cannot delete ${segmentName(n)}: ${error.message}`);
      });
      this.#live.delete(n);
      this.#emptiedAt.delete(n);
    }
  }

  async #read(): Promise<void> {
    const started = performance.now();
    const names = (await readdir(this.dir)).filter((name) => SEGMENT.test(name)).sort();
    const numbers = names.map((name) => Number(SEGMENT.exec(name)![1]));
    const report = this.#report;
    report.segments = numbers.length;
    /** Accepted records by id, in journal order (a Map keeps insertion order). */
    const accepted = new Map<string, { record: PendingMessage; segment: number }>();
    const earlier = new Set<string>();
    for (let s = 0; s < numbers.length; s++) {
      const n = numbers[s]!;
      const text = await readFile(join(this.dir, segmentName(n)), 'utf8');
      let start = 0;
      while (start < text.length) {
        let end = text.indexOf('\n', start);
        const last = end === -1;
        if (last) end = text.length;
        const line = text.slice(start, end);
        start = end + 1;
        if (line === '') continue;
        const record = parseRecord(line);
        if (record === undefined) {
          // Cut short by a crash mid-write: only ever the very end of the newest segment.
          if (last && s === numbers.length - 1) report.torn++;
          else report.corrupt++;
          continue;
        }
        if ('h' in record) {
          if (accepted.delete(record.h)) report.handled++;
          continue;
        }
        const id = record.message.id;
        if (earlier.has(id)) continue;
        earlier.add(id);
        report.accepted++;
        accepted.set(id, { record, segment: n });
      }
    }
    for (const n of numbers) this.#live.set(n, 0);
    for (const [id, { record, segment }] of accepted) {
      this.#pending.push(record);
      this.#segmentOf.set(id, segment);
      this.#live.set(segment, (this.#live.get(segment) ?? 0) + 1);
    }
    for (const n of numbers) if (this.#live.get(n) === 0) this.#emptiedAt.set(n, 0);
    report.pending = this.#pending.length;
    this.#earlier = earlier.size > 0 ? earlier : undefined;
    this.#current = (numbers.at(-1) ?? 0) + 1;
    this.#writing = this.#current;
    report.ms = Math.round(performance.now() - started);
  }
}

type ParsedRecord = PendingMessage | { h: string };

function parseRecord(line: string): ParsedRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as { a?: Message; f?: JournaledFrame[]; s?: string[]; h?: string };
  if (typeof record.h === 'string') return { h: record.h };
  const m = record.a;
  if (
    typeof m !== 'object' ||
    m === null ||
    typeof m.id !== 'string' ||
    typeof m.thread !== 'string' ||
    typeof m.frame !== 'string' ||
    typeof m.to !== 'string' ||
    typeof m.from !== 'string' ||
    typeof m.envelope !== 'string' ||
    !Array.isArray(record.f)
  ) {
    return undefined;
  }
  return { message: m, frames: record.f, scope: Array.isArray(record.s) ? record.s : undefined };
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

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
