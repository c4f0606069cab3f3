/**
 * Thread history: the append-only record of every message of a thread, the source for the API,
 * audit and agents. Bounded twice: per thread (oldest messages drop, and the thread says how many
 * it dropped) and in the number of threads kept (least recently active thread goes first).
 */
import type { MessageView } from './message.ts';

export interface HistoryOptions {
  maxPerThread: number;
  maxThreads: number;
}

interface ThreadRecord {
  created: number;
  /** Ring buffer of views; `start` is the index of the oldest. */
  items: MessageView[];
  start: number;
  dropped: number;
}

export type HistoryListener = (thread: string, message: MessageView) => void;

export class ThreadHistory {
  // Map iteration order is insertion order: re-inserting on append keeps it least-recently-active first.
  private readonly records = new Map<string, ThreadRecord>();
  private readonly listeners = new Set<HistoryListener>();

  constructor(private readonly options: HistoryOptions) {}

  begin(thread: string, created = Date.now()): void {
    if (this.records.has(thread)) return;
    this.records.set(thread, { created, items: [], start: 0, dropped: 0 });
    this.evict();
  }

  append(thread: string, message: MessageView): void {
    let record = this.records.get(thread);
    if (record) {
      this.records.delete(thread);
    } else {
      record = { created: Date.now(), items: [], start: 0, dropped: 0 };
    }
    this.records.set(thread, record);
    if (record.items.length < this.options.maxPerThread) {
      record.items.push(message);
    } else {
      record.items[record.start] = message;
      record.start = (record.start + 1) % record.items.length;
      record.dropped++;
    }
    this.evict();
    for (const listener of this.listeners) listener(thread, message);
  }

  has(thread: string): boolean {
    return this.records.has(thread);
  }

  /** Messages in order, oldest first; undefined when the thread is unknown. */
  messages(thread: string): { created: number; dropped: number; messages: MessageView[] } | undefined {
    const record = this.records.get(thread);
    if (!record) return undefined;
    const { items, start } = record;
    const messages = start === 0 ? items.slice() : [...items.slice(start), ...items.slice(0, start)];
    return { created: record.created, dropped: record.dropped, messages };
  }

  /** Called for every appended message; returns an unsubscribe function. */
  subscribe(listener: HistoryListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get threadCount(): number {
    return this.records.size;
  }

  private evict(): void {
    while (this.records.size > this.options.maxThreads) {
      const oldest = this.records.keys().next().value as string;
      this.records.delete(oldest);
    }
  }
}
