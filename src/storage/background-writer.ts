/**
 * The queue-and-drain state machine behind the append-only logs (audit log, thread history), so
 * whoever appends never waits on the disk. `push` only queues; one drain at a time writes the queue
 * in order, in batches. If the disk refuses a batch, it goes back to the front of the queue, the
 * failure is reported loudly, and a timer retries later: nothing is dropped quietly. `flush` waits
 * for the running drain and, when records are still queued (say behind a retry timer), drains now
 * and rejects if the disk still refuses. What a batch write does is the owner's business.
 */

export interface BackgroundWriterOptions<T> {
  /**
   * Writes one batch. It may take the items it wrote off `batch` (splice), so that after a failure
   * only the rest is queued again.
   */
  write: (batch: T[]) => Promise<void>;
  /** Runs after a failed write, before it is reported: drop a file handle the failure may have broken. */
  afterFailure?: () => Promise<void>;
  /** Wait before the next retry (ms), given how many writes have failed in a row (1 on the first). */
  retryDelayMs: (failures: number) => number;
  /** Where loud failures (and the recovery) are reported. */
  onError: (message: string) => void;
  /** The report of a failed write: `pending` items are kept in memory, the retry comes in `waitMs`. */
  failedMessage: (error: Error, pending: number, waitMs: number) => string;
  /** The report of the first write that succeeds after failures. */
  recoveredMessage: () => string;
  /** The error `flush` rejects with while the disk refuses, `pending` items still queued. */
  flushError: (pending: number) => Error;
  /**
   * An item pushed after close(): true writes it at once (the audit log writes a late record
   * rather than lose it); false keeps it queued until the next flush (the history does not reopen
   * a segment once closed).
   */
  writeAfterClose: boolean;
  /**
   * Items pushed within this many ms of the last write's end wait that long to share one write
   * (0, the default: every push starts a write at once). A first item after a quiet spell is
   * written at once; a steady stream (say tool calls that each wait on I/O, so each would be a
   * batch of one) costs a write per window, not per item. flush() and close() do not wait.
   */
  gatherMs?: number;
}

export class BackgroundWriter<T> {
  readonly #options: BackgroundWriterOptions<T>;
  #queue: T[] = [];
  #running: Promise<void> | undefined;
  #retryTimer: NodeJS.Timeout | undefined;
  /** The gathering wait (options.gatherMs) under way, if any. */
  #gatherTimer: NodeJS.Timeout | undefined;
  /** When the last write ended (performance.now()), -Infinity before the first. */
  #lastEnd = Number.NEGATIVE_INFINITY;
  #failing = false;
  #failures = 0;
  #closed = false;

  constructor(options: BackgroundWriterOptions<T>) {
    this.#options = options;
  }

  /** Items waiting to be written. */
  get pending(): number {
    return this.#queue.length;
  }

  /** True once close() was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Queues `item` and starts a drain unless one is running or a retry is waiting. */
  push(item: T): void {
    this.#queue.push(item);
    if (this.#running || this.#retryTimer || this.#gatherTimer) return;
    if (this.#closed && !this.#options.writeAfterClose) return;
    this.#startOrGather();
  }

  /** Starts a drain now, or when the gathering window after the last write ends. */
  #startOrGather(): void {
    const wait = this.#lastEnd + this.#gatherMs() - performance.now();
    if (wait <= 0) {
      this.#start();
      return;
    }
    this.#gatherTimer = setTimeout(() => {
      this.#gatherTimer = undefined;
      if (!this.#running && !this.#retryTimer) this.#start();
    }, wait);
  }

  #gatherMs(): number {
    return this.#closed ? 0 : (this.#options.gatherMs ?? 0);
  }

  /** Resolves when every item queued so far is written; rejects with flushError if the disk refuses. */
  async flush(): Promise<void> {
    for (;;) {
      if (this.#running) {
        await this.#running;
        continue;
      }
      if (this.#queue.length === 0) return;
      if (this.#gatherTimer) {
        clearTimeout(this.#gatherTimer);
        this.#gatherTimer = undefined;
      }
      if (this.#retryTimer) {
        clearTimeout(this.#retryTimer);
        this.#retryTimer = undefined;
      }
      this.#start();
      await this.#running;
      if (this.#failing) throw this.#options.flushError(this.#queue.length);
    }
  }

  /** Stops retrying, then writes what is queued. The owner closes its files afterwards. */
  async close(): Promise<void> {
    this.#closed = true;
    try {
      await this.flush();
    } finally {
      if (this.#retryTimer) clearTimeout(this.#retryTimer);
      this.#retryTimer = undefined;
    }
  }

  #start(): void {
    this.#running = this.#drain().finally(() => {
      this.#running = undefined;
      this.#lastEnd = performance.now();
      // What came during a gathering writer's write waits for the window (flush does not).
      if (this.#queue.length > 0 && !this.#failing && !this.#retryTimer && !this.#gatherTimer)
        this.#startOrGather();
    });
  }

  async #drain(): Promise<void> {
    const options = this.#options;
    while (this.#queue.length > 0) {
      const batch = this.#queue;
      this.#queue = [];
      try {
        await options.write(batch);
        if (this.#failing) options.onError(options.recoveredMessage());
        this.#failing = false;
        this.#failures = 0;
        if (this.#gatherMs() > 0) return; // one batch per window; #start's end schedules the next
      } catch (error) {
        this.#queue = batch.concat(this.#queue);
        this.#failing = true;
        this.#failures++;
        await options.afterFailure?.();
        const wait = options.retryDelayMs(this.#failures);
        options.onError(options.failedMessage(error as Error, this.#queue.length, wait));
        if (!this.#closed) {
          this.#retryTimer = setTimeout(() => {
            this.#retryTimer = undefined;
            if (!this.#running) this.#start();
          }, wait);
          this.#retryTimer.unref();
        }
        return;
      }
    }
  }
}
