/**
 * Thread history on disk: an append-only segment log in `<data_dir>/history/`, so `GET
 * /threads/:id` still answers after a restart.
 *
 * Why a segment log and not a file per thread: 10,000 live threads would mean 10,000 open files or
 * an open/append/close per message. Here every message is one JSON line appended to the current
 * segment; a segment that reaches `segmentBytes` is closed and a new one begun, and the oldest
 * segments are deleted while the folder holds more than `maxBytes`. The in-memory ThreadHistory is
 * the index: at start the segments are replayed into it, oldest first, and its own bounds (threads,
 * messages per thread) apply to what comes back.
 *
 * Writes are queued and drained by one writer in batches, so the bus never waits on the disk. If
 * the disk refuses, the lines stay queued, the failure is reported loudly, and the write is retried;
 * `pending` lets the daemon stop accepting new work before the queue grows without bound.
 */
import { createReadStream } from 'node:fs';
import { type FileHandle, mkdir, open, readdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { HistoryError } from '../../errors.ts';
import { BackgroundWriter } from '../../storage/background-writer.ts';
import { writeAllSync } from '../../storage/write-all.ts';
import type { MessageKind } from '../message.ts';
import type { HistoryEntry, ThreadHistory } from './memory.ts';

export interface HistoryLogOptions {
  /** Folder of the segments (created 0700 if missing). */
  dir: string;
  /** Most bytes kept on disk; the oldest segments go first. */
  maxBytes: number;
  /** Size at which a segment is closed and the next begun. Default: maxBytes / 8, within 64 KiB..64 MiB. */
  segmentBytes?: number;
  /** Where loud failures go; stderr by default. */
  onError?: (message: string) => void;
  /** Wait before retrying a failed write (ms). */
  retryMs?: number;
}

export function defaultHistoryLogOptions(
  maxBytes: number,
): Required<Omit<HistoryLogOptions, 'dir' | 'maxBytes'>> {
  return {
    segmentBytes: Math.min(64 * 1024 * 1024, Math.max(64 * 1024, Math.floor(maxBytes / 8))),
    onError: (message) => process.stderr.write(`[organism history] ${message}\n`),
    retryMs: 1000,
  };
}

/** One line of a segment: a message (`i` set) or a thread marked stopped (`x: "stopped"`). */
interface LogLine {
  /** thread */
  t: string;
  /** time, epoch ms */
  s: number;
  i?: string;
  f?: string;
  o?: string;
  k?: MessageKind;
  p?: string;
  x?: 'stopped';
}

const SEGMENT = /^segment-(\d{8})\.jsonl$/;
const segmentName = (n: number) => `segment-${String(n).padStart(8, '0')}.jsonl`;

export interface ReplayReport {
  segments: number;
  entries: number;
  /** Lines that did not parse (a line cut short by a crash, say) and were skipped. */
  skipped: number;
}

export class HistoryLog {
  readonly dir: string;
  readonly #options: Required<HistoryLogOptions>;
  /** Segment number -> size in bytes, oldest first. */
  readonly #segments = new Map<number, number>();
  #current = 0;
  #handle: FileHandle | undefined;
  readonly #writer: BackgroundWriter<string>;
  #unsubscribe: Array<() => void> = [];

  private constructor(options: HistoryLogOptions) {
    this.dir = options.dir;
    this.#options = {
      ...defaultHistoryLogOptions(options.maxBytes),
      ...stripUndefined(options),
    } as Required<HistoryLogOptions>;
    const { onError, retryMs } = this.#options;
    this.#writer = new BackgroundWriter<string>({
      write: (batch) => this.#write(batch),
      afterFailure: async () => {
        await this.#handle?.close().catch(() => {});
        this.#handle = undefined;
      },
      retryDelayMs: () => retryMs,
      onError,
      failedMessage: (error, pending, wait) =>
        `CANNOT WRITE THREAD HISTORY in ${this.dir}: ${error.message}. ${pending} line(s) kept in memory; retrying in ${wait} ms`,
      recoveredMessage: () => `history folder ${this.dir} is writable again; queued lines written`,
      flushError: (pending) =>
        new HistoryError('history.io', `cannot write the thread history in ${this.dir}`, { pending }),
      // Once closed, a segment is not reopened: late lines wait for an explicit flush.
      writeAfterClose: false,
    });
  }

  /** Opens (creating) the folder and takes stock of the segments already there. */
  static async open(options: HistoryLogOptions): Promise<HistoryLog> {
    const log = new HistoryLog(options);
    try {
      await mkdir(log.dir, { recursive: true, mode: 0o700 });
      const names = (await readdir(log.dir)).filter((n) => SEGMENT.test(n)).sort();
      for (const name of names) {
        const n = Number(SEGMENT.exec(name)![1]);
        log.#segments.set(n, (await stat(join(log.dir, name))).size);
      }
    } catch (error) {
      throw new HistoryError(
        'history.io',
        `cannot open the history folder ${log.dir}: ${(error as Error).message}`,
        {
          dir: log.dir,
        },
      );
    }
    log.#current = Math.max(0, ...log.#segments.keys());
    return log;
  }

  /** Messages waiting to be written. */
  get pending(): number {
    return this.#writer.pending;
  }

  /** Bytes on disk now (approximately: what this process wrote plus what was there). */
  get bytes(): number {
    let total = 0;
    for (const size of this.#segments.values()) total += size;
    return total;
  }

  /** Reads every segment, oldest first, into `history`. Call before attach(), so nothing is written twice. */
  async replay(history: ThreadHistory): Promise<ReplayReport> {
    const report: ReplayReport = { segments: 0, entries: 0, skipped: 0 };
    for (const n of [...this.#segments.keys()].sort((a, b) => a - b)) {
      report.segments++;
      const lines = createInterface({
        input: createReadStream(join(this.dir, segmentName(n)), { encoding: 'utf8' }),
        crlfDelay: Number.POSITIVE_INFINITY,
      });
      for await (const text of lines) {
        if (text === '') continue;
        const line = parseLine(text);
        if (!line) {
          report.skipped++;
          continue;
        }
        if (line.x === 'stopped') {
          history.markStopped(line.t, line.s);
          continue;
        }
        history.append(line.t, {
          id: line.i!,
          from: line.f!,
          to: line.o!,
          kind: line.k!,
          payload: line.p!,
          time: line.s,
        });
        report.entries++;
      }
    }
    return report;
  }

  /** Writes every message appended to `history` from now on, and every thread it marks stopped. */
  attach(history: ThreadHistory): void {
    this.#unsubscribe.push(
      history.subscribe((thread, entry) => this.append(thread, entry)),
      history.subscribeStopped((thread, time) =>
        this.#writer.push(JSON.stringify({ t: thread, s: time, x: 'stopped' })),
      ),
    );
  }

  append(thread: string, entry: HistoryEntry): void {
    const line: LogLine = {
      t: thread,
      s: entry.time,
      i: entry.id,
      f: entry.from,
      o: entry.to,
      k: entry.kind,
      p: entry.payload,
    };
    this.#writer.push(JSON.stringify(line));
  }

  /** Resolves when every line queued so far is written; rejects with HistoryError if the disk refuses. */
  flush(): Promise<void> {
    return this.#writer.flush();
  }

  /** Stops listening, writes what is queued, syncs and closes the segment. */
  async close(): Promise<void> {
    for (const off of this.#unsubscribe) off();
    this.#unsubscribe = [];
    try {
      await this.#writer.close();
    } finally {
      const handle = this.#handle;
      this.#handle = undefined;
      await handle?.sync().catch(() => {});
      await handle?.close().catch(() => {});
    }
  }

  /**
   * Writes `batch` in pieces that fit the current segment (a segment passes segmentBytes by at most
   * one line), rotating between them. Written lines are taken off `batch`, so after a failure the
   * caller re-queues only what did not reach the disk.
   */
  async #write(batch: string[]): Promise<void> {
    while (batch.length > 0) {
      const size = this.#segments.get(this.#current);
      if (!this.#handle || size === undefined || size >= this.#options.segmentBytes) await this.#rotate();
      const room = this.#options.segmentBytes - (this.#segments.get(this.#current) ?? 0);
      let bytes = 0;
      let count = 0;
      while (count < batch.length) {
        const next = Buffer.byteLength(batch[count]!, 'utf8') + 1;
        if (count > 0 && bytes + next > room) break;
        bytes += next;
        count++;
      }
      // Synchronously (write-all.ts): a batch is one line where messages come one at a time.
      writeAllSync(this.#handle!.fd, `${batch.slice(0, count).join('\n')}\n`);
      this.#segments.set(this.#current, (this.#segments.get(this.#current) ?? 0) + bytes);
      batch.splice(0, count);
    }
  }

  /** Closes the full (or first) segment, begins the next, and deletes the oldest beyond maxBytes. */
  async #rotate(): Promise<void> {
    const size = this.#segments.get(this.#current);
    if (this.#handle && size !== undefined && size < this.#options.segmentBytes) return;
    if (this.#handle) {
      await this.#handle.sync().catch(() => {});
      await this.#handle.close();
      this.#handle = undefined;
    }
    // Reopen a segment with room left (a restart); otherwise begin the next one.
    if (size === undefined || size >= this.#options.segmentBytes) {
      this.#current++;
      this.#segments.set(this.#current, 0);
    }
    this.#handle = await open(join(this.dir, segmentName(this.#current)), 'a+', 0o600);
    // A line cut short by a crash must not swallow the next one: begin on a fresh line.
    const existing = this.#segments.get(this.#current) ?? 0;
    if (existing > 0) {
      const last = Buffer.alloc(1);
      await this.#handle.read(last, 0, 1, existing - 1);
      if (last[0] !== 0x0a) {
        await this.#handle.appendFile('\n');
        this.#segments.set(this.#current, existing + 1);
      }
    }
    let total = this.bytes;
    for (const [n, bytes] of [...this.#segments].sort((a, b) => a[0] - b[0])) {
      if (total <= this.#options.maxBytes || n === this.#current) break;
      await unlink(join(this.dir, segmentName(n))).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error;
      });
      this.#segments.delete(n);
      total -= bytes;
    }
  }
}

function parseLine(text: string): LogLine | undefined {
  try {
    const line = JSON.parse(text) as LogLine;
    if (typeof line.t !== 'string' || typeof line.s !== 'number') return undefined;
    if (line.x === 'stopped') return line;
    if (typeof line.i !== 'string' || typeof line.f !== 'string' || typeof line.o !== 'string')
      return undefined;
    if (typeof line.k !== 'string' || typeof line.p !== 'string') return undefined;
    return line;
  } catch {
    return undefined;
  }
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
