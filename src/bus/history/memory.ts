/**
 * Thread history: the append-only record of every message of a thread, the source for the API,
 * audit and agents. Bounded twice: per thread (oldest messages drop, and the thread says how many
 * it dropped) and in the number of threads kept (least recently active thread goes first).
 */
import type { MessageKind, MessageView } from './message.ts';

/** One entry as kept: the view's fields, with the time as epoch ms (formatted only when read). */
export interface HistoryEntry {
  id: string;
  from: string;
  to: string;
  kind: MessageKind;
  payload: string;
  time: number;
}

export function toView(entry: HistoryEntry): MessageView {
  return { ...entry, time: new Date(entry.time).toISOString() };
}

export interface HistoryOptions {
  maxPerThread: number;
  maxThreads: number;
}

interface ThreadRecord {
  created: number;
  /** Ring buffer of views; `start` is the index of the oldest. */
  items: HistoryEntry[];
  start: number;
  dropped: number;
}

export type HistoryListener = (thread: string, entry: HistoryEntry) => void;

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

  append(thread: string, message: HistoryEntry): void {
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
    const ordered = start === 0 ? items : [...items.slice(start), ...items.slice(0, start)];
    return { created: record.created, dropped: record.dropped, messages: ordered.map(toView) };
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
