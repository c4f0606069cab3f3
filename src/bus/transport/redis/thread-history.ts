/**
 * This daemon's copy of the shared thread histories (`organism:{group}:history:<id>` lists): each
 * entry recorded here is written through to Redis (in the command batch, with the message it
 * belongs to), and the copy is made whole from the list (LRANGE) when something needs all of it:
 * the API reading the thread, an agent about to handle a message of it (it reads the history), a
 * watcher on this daemon. Announcing every entry to every daemon instead would cost each daemon
 * the work of all the others; entries are announced only for threads some daemon follows live
 * (thread-events.ts).
 */
import type { Redis } from 'ioredis';
import type { HistoryEntry, ThreadHistory } from '../../history/index.ts';
import type { BusBatch } from './batch.ts';
import type { BusKeys } from './options.ts';
import type { ThreadEvents } from './thread-events.ts';

/** How long a history list lives without an entry added, ms. */
export const HISTORY_TTL_MS = 7 * 24 * 3600 * 1000;
/** A history list's expiry is pushed out at most this often by one daemon. */
const HISTORY_REFRESH_MS = 3600 * 1000;
/** A delivery whose thread's history is at most this many entries behind waits for events first (see ThreadEvents.waitFor). */
const CATCH_UP_ENTRIES = 8;

export interface HistoryMirrorOptions {
  /** The transport's command connection (history re-reads). */
  client: Redis;
  batch: BusBatch;
  keys: BusKeys;
  /** limits.max_history_per_thread. */
  maxHistoryPerThread: number;
  channel: ThreadEvents;
  /** A thread's key (the thread store's, made once per thread). */
  threadKey(thread: string): string;
}

export class HistoryMirror {
  #history: ThreadHistory | undefined;
  /** Set while applying another daemon's change, so the history listeners do not write it back. */
  #applyingNow = false;
  /** Entry ids of histories just re-read from Redis, whose events may still arrive. */
  readonly #fresh = new Map<string, Set<string>>();
  /** When this daemon last pushed out a history list's expiry (see due). */
  readonly #refreshed = new Map<string, number>();

  constructor(private readonly options: HistoryMirrorOptions) {}

  attach(history: ThreadHistory): void {
    this.#history = history;
  }

  /** Whether the change being made now is another daemon's (it must not be written back). */
  get applying(): boolean {
    return this.#applyingNow;
  }

  /** Runs `change` to the local history as another daemon's change (see applying). */
  quietly(change: () => void): void {
    this.#applyingNow = true;
    try {
      change();
    } finally {
      this.#applyingNow = false;
    }
  }

  /** An entry recorded on this daemon: appended to the thread's list, numbered and announced. */
  write(thread: string, entry: HistoryEntry): void {
    this.options.batch.history(
      this.options.threadKey(thread),
      JSON.stringify(entry),
      due(this.#refreshed, thread, HISTORY_REFRESH_MS),
    );
  }

  /** An entry another daemon announced (the thread is followed somewhere). */
  announced(thread: string, entry: HistoryEntry): void {
    // Announced because some daemon follows the thread; this one need not keep up unless it does.
    if (!this.options.channel.watched.has(thread) || this.#fresh.get(thread)?.has(entry.id)) return;
    this.quietly(() => this.#history!.append(thread, entry));
    this.options.channel.caughtUp(thread, () => this.#count(thread));
  }

  /**
   * Makes this daemon's copy of a thread's history whole when something needs all of it (`whole`,
   * or a watcher here): when Redis has numbered more entries than this daemon holds (other daemons
   * recorded them, or it missed events while reconnecting), it reads the list. `remote` undefined:
   * the state came without the count (read for a listener that reads no history), asked for now.
   */
  sync(thread: string, remote: number | undefined, whole: boolean): Promise<void> | undefined {
    const watched = this.options.channel.watched.has(thread);
    if (!whole && !watched) return undefined;
    if (remote === undefined) {
      return this.options.batch
        .load(this.options.threadKey(thread), false, '')
        .then((reply) => this.sync(thread, reply ? Number(reply[7]) : 1, whole));
    }
    const have = this.#count(thread);
    if (have >= remote) return undefined;
    // Followed here and just behind: usually the other daemon's events for these entries are on
    // their way (pub/sub and this read come on different connections); wait for them briefly.
    if (watched && have >= 0 && remote - have <= CATCH_UP_ENTRIES) {
      return this.options.channel
        .waitFor(thread, remote)
        .then(() => (this.#count(thread) >= remote ? undefined : this.reread(thread, remote)));
    }
    return this.reread(thread, remote);
  }

  /** Entries this daemon's copy of a thread's history has numbered (-1: none kept). */
  #count(thread: string): number {
    const local = this.#history!.summary(thread);
    return local ? local.messages + local.dropped : -1;
  }

  /** Reads the thread's list; `remote`: how many entries Redis has numbered (0: not known). */
  async reread(thread: string, remote: number): Promise<void> {
    const { client, keys, maxHistoryPerThread, channel } = this.options;
    const items = await client.lrange(keys.history(thread), -maxHistoryPerThread, -1);
    if (items.length === 0) return;
    const entries = items.map((item) => JSON.parse(item) as HistoryEntry);
    const local = channel.watched.has(thread) ? this.#history!.messages(thread) : undefined;
    if (local) {
      // Watchers here follow the entries as they are appended: give them the ones they missed.
      const have = new Set(local.messages.map((m) => m.id));
      this.quietly(() => {
        for (const entry of entries) if (!have.has(entry.id)) this.#history!.append(thread, entry);
      });
    } else {
      this.#history!.reset(thread, entries, Math.max(remote, entries.length));
    }
    // Events for these entries may still be on their way: they must not be appended twice.
    this.#fresh.set(thread, new Set(entries.map((e) => e.id)));
    setTimeout(() => this.#fresh.delete(thread), 10_000).unref();
  }
}

/** True (and noted) when `key` was last marked in `seen` at least `everyMs` ago or never; bounded. */
export function due(seen: Map<string, number>, key: string, everyMs: number): boolean {
  const now = Date.now();
  const last = seen.get(key);
  if (last !== undefined && now - last < everyMs) return false;
  if (seen.size >= 100_000) seen.clear();
  seen.set(key, now);
  return true;
}
