/**
 * The thread events channel (`organism:{group}:events`): what the daemons of an organism tell each
 * other about shared threads as it happens. Idle and stop notices, and the history entries of
 * threads some daemon follows live (`organism send --wait`, `GET /threads/:id/follow`; the thread
 * hash's field `w` says until when), so those watchers see work done on any daemon. One message
 * per command batch: the sender's name on the first line (a daemon skips its own unparsed), then
 * one event a line; the batch script publishes it (lua/batch.lua).
 *
 * This module is the channel's side of a daemon: its own subscribed connection (a subscribed
 * connection can do nothing else), which threads this daemon follows live (marked in Redis so the
 * others announce their entries), and deliveries waiting for events to catch its copy of a
 * history up. What an event does to the thread state is RedisThreadStore's (thread-store.ts).
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { HistoryEntry } from '../../history/index.ts';
import type { BusBatch } from './batch.ts';
import { busClientOptions, openBusClient } from './connection.ts';
import { DEFAULT_CONNECT_TIMEOUT_MS } from './options.ts';

/** A delivery that waits for events waits this long (ms), then its thread's list is re-read. */
const CATCH_UP_MS = 20;
/** A thread followed here is marked followed this far ahead (ms), and re-marked every third of it. */
const WATCH_MS = 60_000;

export interface ThreadEvent {
  /** thread */
  t: string;
  /** m: history entry, i: idle, s: stopped */
  k: 'm' | 'i' | 's';
  e?: HistoryEntry;
  /** idle: how many history entries the thread has */
  n?: number;
}

export interface ThreadEventsOptions {
  /** The transport's command batch: follow marks ride in it. */
  batch: BusBatch;
  /** For the pub/sub connection. */
  url: string;
  /** The channel. */
  channel: string;
  /** This daemon (its consumer name): its own events are skipped. */
  origin: string;
  /** A thread's key (the thread store's, made once per thread). */
  threadKey(thread: string): string;
  connectTimeoutMs?: number;
  logger?: Pick<Logger, 'warn' | 'error'>;
}

export class ThreadEvents {
  /** Threads somebody on this daemon follows live (see follow). */
  readonly watched = new Set<string>();
  #listening = false;
  /** The subscribed connection, once open. */
  subscriber: Redis | undefined;
  #watchTimer: NodeJS.Timeout | undefined;
  /** Deliveries waiting for history events to catch this daemon's copy up (see waitFor). */
  readonly #catchingUp = new Map<string, Array<{ target: number; done(): void }>>();

  constructor(private readonly options: ThreadEventsOptions) {}

  /**
   * Subscribes (again after every reconnect). `onEvent` gets each event another daemon announced;
   * `onGap` is called when events may have been missed: the connection dropped, or a subscription
   * succeeded while this daemon was not listening.
   */
  open(onEvent: (event: ThreadEvent) => void, onGap: () => void): void {
    const o = this.options;
    const { client } = openBusClient(
      o.url,
      busClientOptions(o.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS, `organism-${o.origin}-events`),
      (message) => o.logger?.warn(`redis thread events connection lost: ${message}`),
    );
    this.subscriber = client;
    client.on('message', (_channel: string, text: string) => this.#receive(text, onEvent));
    // Events sent while the connection was down are lost.
    client.on('close', () => {
      this.#listening = false;
      onGap();
    });
    const listen = (): void => {
      client.subscribe(o.channel).then(
        () => {
          // A record read before the connection dropped may have been applied since.
          if (!this.#listening) onGap();
          this.#listening = true;
        },
        (error: unknown) => {
          o.logger?.error(`cannot subscribe to thread events: ${(error as Error).message}`);
        },
      );
    };
    client.on('ready', listen); // after a reconnect too (subscribing again is harmless)
  }

  /** Whether events from the other daemons reach this one now (subscribed). */
  get receiving(): boolean {
    return this.#listening;
  }

  /**
   * Follows a thread live here (`on`), or stops: while followed, its mark in Redis makes every
   * daemon announce its history entries. Returns true when the thread was not followed before.
   */
  follow(thread: string, on: boolean): boolean {
    if (!on) {
      this.watched.delete(thread);
      if (this.watched.size === 0 && this.#watchTimer) {
        clearInterval(this.#watchTimer);
        this.#watchTimer = undefined;
      }
      return false; // the mark runs out by itself (another daemon may still follow the thread)
    }
    if (this.watched.has(thread)) return false;
    this.watched.add(thread);
    this.#mark(thread);
    this.#watchTimer ??= setInterval(() => {
      for (const t of this.watched) this.#mark(t);
    }, WATCH_MS / 3);
    this.#watchTimer.unref();
    return true;
  }

  /** Resolves when caughtUp says the thread's history has `target` entries, or after CATCH_UP_MS. */
  waitFor(thread: string, target: number): Promise<void> {
    return new Promise((resolve) => {
      let list = this.#catchingUp.get(thread);
      if (!list) {
        list = [];
        this.#catchingUp.set(thread, list);
      }
      const waiter = {
        target,
        done: () => {
          clearTimeout(timer);
          const left = this.#catchingUp.get(thread)?.filter((w) => w !== waiter) ?? [];
          if (left.length > 0) this.#catchingUp.set(thread, left);
          else this.#catchingUp.delete(thread);
          resolve();
        },
      };
      const timer = setTimeout(waiter.done, CATCH_UP_MS);
      list.push(waiter);
    });
  }

  /** An entry of the thread arrived: the waiters whose target `count()` entries reach go on. */
  caughtUp(thread: string, count: () => number): void {
    const waiting = this.#catchingUp.get(thread);
    if (!waiting) return;
    const have = count();
    for (const w of [...waiting]) if (have >= w.target) w.done();
  }

  close(): void {
    if (this.#watchTimer) clearInterval(this.#watchTimer);
    this.subscriber?.disconnect();
  }

  #mark(thread: string): void {
    this.options.batch.follow(this.options.threadKey(thread), Date.now() + WATCH_MS, WATCH_MS);
  }

  /** A batch of events from some daemon: this daemon's own are skipped unparsed. */
  #receive(text: string, onEvent: (event: ThreadEvent) => void): void {
    const first = text.indexOf('\n');
    if (first < 0 || text.slice(0, first) === this.options.origin) return;
    let start = first + 1;
    while (start < text.length) {
      let end = text.indexOf('\n', start);
      if (end < 0) end = text.length;
      const event = parse(text.slice(start, end));
      if (event) onEvent(event);
      start = end + 1;
    }
  }
}

/** One event line; undefined for one that is not an event. */
function parse(text: string): ThreadEvent | undefined {
  let event: ThreadEvent;
  try {
    // History entries come as '<n>|<json>' (n: the entry's number in its thread).
    event = JSON.parse(text.startsWith('{') ? text : text.slice(text.indexOf('|') + 1)) as ThreadEvent;
  } catch {
    return undefined;
  }
  return typeof event.t === 'string' ? event : undefined;
}
