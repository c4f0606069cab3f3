/**
 * Thread history: the append-only record of every message of a thread, the source for the API,
 * audit and agents. Bounded three ways: per thread (oldest messages drop, and the thread says how
 * many it dropped), in the number of threads kept (least recently active thread goes first), and
 * in the "recent messages" window across all threads that `GET /messages` pages through.
 *
 * This is the in-memory store the bus reads and writes. Persistence (./disk.ts) subscribes to it
 * and replays into it at start, so the bus never waits on a disk.
 */
import { type RecencyTable, recencyTable } from '../../recency.ts';
import type { MessageKind, MessageView } from '../message.ts';

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
  /** Messages across all threads kept for `recent()` (GET /messages). Default 10,000. */
  maxRecent?: number;
}

interface ThreadRecord {
  created: number;
  /** Time of the last message (epoch ms). */
  updated: number;
  /** Ring buffer of entries; `start` is the index of the oldest. */
  items: HistoryEntry[];
  start: number;
  dropped: number;
  /** Stopped by a budget or by an operator; survives restarts through the disk log. */
  stopped: boolean;
  /**
   * Every sender and receiver named in the thread, for filtering by listener. An array, not a
   * Set: a thread names a handful, and at 100,000 live threads a Set each cost ~100 bytes more.
   * Frozen and shared between threads that name the same listeners in the same order (see
   * withParticipant): never changed in place.
   */
  participants: readonly string[];
}

/** What a thread listing shows for one thread (no messages). */
export interface ThreadSummary {
  thread: string;
  created: number;
  updated: number;
  /** Messages kept now. */
  messages: number;
  /** Messages dropped from the front by max_history_per_thread. */
  dropped: number;
  stopped: boolean;
  participants: string[];
}

/** One message in the cross-thread window, with its place (`seq`, increasing) for paging. */
export interface RecentMessage {
  seq: number;
  thread: string;
  entry: HistoryEntry;
}

export type HistoryListener = (thread: string, entry: HistoryEntry) => void;
export type StopListener = (thread: string, time: number) => void;

export class ThreadHistory {
  // Recency is activity: append, begin and reset mark a thread used (get/set); every read peeks.
  // Not a Map re-inserted on append: see ../../recency.ts for what that cost at 10,000 threads.
  readonly #records: RecencyTable<string, ThreadRecord>;
  readonly #listeners = new Set<HistoryListener>();
  readonly #stopListeners = new Set<StopListener>();
  // The recent window as two parallel rings (no object per message): slot = seq % size.
  readonly #recentThreads: string[] = [];
  readonly #recentEntries: HistoryEntry[] = [];
  readonly #maxRecent: number;
  #appended = 0;

  constructor(private readonly options: HistoryOptions) {
    this.#maxRecent = Math.max(1, options.maxRecent ?? 10_000);
    this.#records = recencyTable(options.maxThreads);
  }

  begin(thread: string, created = Date.now()): void {
    if (this.#records.has(thread)) return;
    this.#records.set(thread, newRecord(created));
  }

  append(thread: string, message: HistoryEntry): void {
    let record = this.#records.get(thread);
    if (!record) {
      // A thread seen first through a message (a replay from disk): it began with that message.
      record = newRecord(message.time);
      this.#records.set(thread, record);
    }
    const items = record.items;
    if (items.length < this.options.maxPerThread) {
      // Grown to size while small: push() (and a spread) on a short array reserves 17 slots,
      // which is most of what a thread with a message or two costs when 100,000 are live.
      if (items.length < 8) record.items = items.concat(message);
      else items.push(message);
    } else {
      record.items[record.start] = message;
      record.start = (record.start + 1) % record.items.length;
      record.dropped++;
    }
    record.updated = message.time;
    addParticipant(record, message.from);
    addParticipant(record, message.to);
    const slot = this.#appended % this.#maxRecent;
    this.#recentThreads[slot] = thread;
    this.#recentEntries[slot] = message;
    this.#appended++;
    for (const listener of this.#listeners) listener(thread, message);
  }

  /** Marks a thread stopped (budget or kill), so listings say so even after a restart. */
  markStopped(thread: string, time = Date.now()): void {
    const record = this.#records.peek(thread);
    if (!record || record.stopped) return;
    record.stopped = true;
    for (const listener of this.#stopListeners) listener(thread, time);
  }

  /**
   * Replaces a thread's messages with `entries` (oldest first), as a shared store re-reading the
   * canonical copy after it missed some (several daemons on Redis). `appended` is how many the
   * thread ever had, so `dropped` stays right. Listeners are not told; the stopped flag is kept.
   */
  reset(thread: string, entries: readonly HistoryEntry[], appended = entries.length): void {
    const before = this.#records.peek(thread);
    const record = newRecord(before?.created ?? entries[0]?.time ?? Date.now());
    record.stopped = before?.stopped ?? false;
    const kept = entries.slice(-this.options.maxPerThread);
    record.items = [...kept];
    record.dropped = Math.max(0, appended - kept.length);
    for (const entry of kept) {
      addParticipant(record, entry.from);
      addParticipant(record, entry.to);
      record.updated = entry.time;
    }
    this.#records.set(thread, record);
  }

  has(thread: string): boolean {
    return this.#records.has(thread);
  }

  /** Messages in order, oldest first; undefined when the thread is unknown. */
  messages(
    thread: string,
  ): { created: number; dropped: number; stopped: boolean; messages: MessageView[] } | undefined {
    const record = this.#records.peek(thread);
    if (!record) return undefined;
    const { items, start } = record;
    const ordered = start === 0 ? items : [...items.slice(start), ...items.slice(0, start)];
    return {
      created: record.created,
      dropped: record.dropped,
      stopped: record.stopped,
      messages: ordered.map(toView),
    };
  }

  summary(thread: string): ThreadSummary | undefined {
    const record = this.#records.peek(thread);
    return record ? summarize(thread, record) : undefined;
  }

  /** Ids of the threads kept starting with `prefix`, at most `limit` of them (most recent first). */
  idsStartingWith(prefix: string, limit: number): string[] {
    // A whole id (what scripts and the CLI mostly send) needs no scan of every thread kept.
    if (this.#records.has(prefix)) return [prefix];
    const out: string[] = [];
    for (const id of this.#records.keys()) {
      if (!id.startsWith(prefix)) continue;
      out.push(id);
      if (out.length >= limit) break;
    }
    return out;
  }

  /** Every thread kept, most recently active first. */
  *threads(): Generator<ThreadSummary> {
    // Keys first (most recent first), so appends while the caller iterates change nothing here.
    for (const id of [...this.#records.keys()]) {
      const record = this.#records.peek(id);
      if (record) yield summarize(id, record);
    }
  }

  /**
   * Messages of the recent window, newest first, starting below `before` (a seq from an earlier
   * page; absent: the newest). Stops after `limit` matches or when the window is exhausted.
   */
  recent(
    limit: number,
    before: number | undefined,
    match: (thread: string, entry: HistoryEntry) => boolean = () => true,
  ): { messages: RecentMessage[]; next: number | null } {
    const oldest = Math.max(0, this.#appended - this.#maxRecent);
    let seq = Math.min(before ?? this.#appended, this.#appended) - 1;
    const out: RecentMessage[] = [];
    for (; seq >= oldest && out.length < limit; seq--) {
      const slot = seq % this.#maxRecent;
      const thread = this.#recentThreads[slot]!;
      const entry = this.#recentEntries[slot]!;
      if (match(thread, entry)) out.push({ seq, thread, entry });
    }
    return { messages: out, next: seq >= oldest && out.length > 0 ? out[out.length - 1]!.seq : null };
  }

  /** Called for every appended message; returns an unsubscribe function. */
  subscribe(listener: HistoryListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Called when a thread is marked stopped; returns an unsubscribe function. */
  subscribeStopped(listener: StopListener): () => void {
    this.#stopListeners.add(listener);
    return () => this.#stopListeners.delete(listener);
  }

  get threadCount(): number {
    return this.#records.size;
  }

  /** Messages appended since this history was created (replayed ones included). */
  get totalAppended(): number {
    return this.#appended;
  }
}

function newRecord(created: number): ThreadRecord {
  return {
    created,
    updated: created,
    items: [],
    start: 0,
    dropped: 0,
    stopped: false,
    participants: NO_PARTICIPANTS,
  };
}

function addParticipant(record: ThreadRecord, name: string): void {
  if (!record.participants.includes(name)) record.participants = withParticipant(record.participants, name);
}

const NO_PARTICIPANTS: readonly string[] = Object.freeze([]);

/**
 * The lists of participants threads have, shared: most threads of an organism name the same few
 * listeners in the same order (api, greeter, holder), and one array each cost ~60 bytes at
 * 100,000 live threads. Keyed by the list before and the name added; bounded, so an organism
 * whose threads name ever new listeners keeps no more than this many, and makes the rest anew.
 */
const SHARED_LISTS = 4_096;
const sharedLists = new Map<readonly string[], Map<string, readonly string[]>>();
let sharedCount = 0;

function withParticipant(list: readonly string[], name: string): readonly string[] {
  let next = sharedLists.get(list);
  const known = next?.get(name);
  if (known) return known;
  const grown = Object.freeze(list.concat(name));
  if (sharedCount >= SHARED_LISTS) return grown;
  if (!next) {
    next = new Map();
    sharedLists.set(list, next);
  }
  next.set(name, grown);
  sharedCount++;
  return grown;
}

function summarize(thread: string, record: ThreadRecord): ThreadSummary {
  return {
    thread,
    created: record.created,
    updated: record.updated,
    messages: record.items.length,
    dropped: record.dropped,
    stopped: record.stopped,
    participants: [...record.participants],
  };
}
