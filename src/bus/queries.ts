/**
 * Queries (BusApi, BusQueries): what the API, metrics and CLI read from a running bus — threads and
 * their messages, filtered pages over the history, watchers of one thread, listeners with their
 * schemas and queue state. None of it is on the message path, and none of it changes the bus.
 */
import { decodePayload } from '../xml/codec.ts';
import { schemaToExample, schemaToPrompt } from '../xml/describe.ts';
import { parsePayload } from '../xml/parse.ts';
import type {
  BusStats,
  ListenerInfo,
  ListenerState,
  MessagePage,
  MessageQuery,
  ThreadListItem,
  ThreadPage,
  ThreadQuery,
  ThreadStatus,
  ThreadView,
  ThreadWatcher,
} from './api.ts';
import type { BusContext } from './bus-context.ts';
import { type ThreadHistory, toView } from './history/index.ts';
import type { InFlight } from './in-flight.ts';

export class Queries {
  constructor(
    private readonly bus: BusContext,
    private readonly inFlight: InFlight,
  ) {
    // Watchers see each message as it is recorded; no watcher on a thread costs one map lookup.
    bus.history.subscribe((thread, entry) => {
      const set = bus.watchers.get(thread);
      if (!set) return;
      const view = toView(entry);
      for (const w of set) w.onMessage(view);
    });
  }

  thread(id: string): ThreadView | undefined {
    const record = this.bus.history.messages(id);
    if (!record) return undefined;
    return {
      thread: id,
      status: this.#threadStatus(id, record.stopped),
      created: new Date(record.created).toISOString(),
      messages: record.messages,
    };
  }

  async loadThread(id: string): Promise<void> {
    await this.bus.store.load(id, '', true);
  }

  watch(thread: string, watcher: ThreadWatcher): () => void {
    const watchers = this.bus.watchers;
    let set = watchers.get(thread);
    if (!set) {
      set = new Set();
      watchers.set(thread, set);
      this.bus.store.watch(thread, true);
    }
    set.add(watcher);
    return () => {
      if (!set.delete(watcher) || set.size > 0) return;
      if (watchers.get(thread) === set) watchers.delete(thread);
      this.bus.store.watch(thread, false);
    };
  }

  listThreads(query: ThreadQuery): ThreadPage {
    return listThreads(this.bus.history, query, (id, stopped) => this.#threadStatus(id, stopped));
  }

  listMessages(query: MessageQuery): MessagePage {
    return listMessages(this.bus.history, query);
  }

  threadIdsStartingWith(prefix: string, limit: number): string[] {
    return this.bus.history.idsStartingWith(prefix, limit);
  }

  decodeReply(listener: string, payload: string): { tag: string; payload: Record<string, unknown> } {
    const parsed = parsePayload(payload, this.bus.xmlLimits);
    const response = this.bus.listeners.get(listener)?.response;
    const schema = response !== undefined && response.tag === parsed.tag ? response.schema : {};
    return { tag: parsed.tag, payload: decodePayload(parsed.node, schema) };
  }

  listeners(): ListenerInfo[] {
    return [...this.bus.listeners.values()].map((l) => ({
      name: l.name,
      description: l.description,
      tag: l.tag,
      agent: l.agent,
      peers: l.peerList,
      broadcast: l.broadcast,
      tools: l.tools,
    }));
  }

  async describe(name: string): Promise<{ xsd: string; example: string; prompt: string } | undefined> {
    const l = this.bus.listeners.get(name);
    if (!l) return undefined;
    const spec = { tag: l.tag, schema: l.schema };
    // The XSD writer (with its regex translation) is loaded when a schema is first asked for, not at start.
    const { schemaToXsd } = await import('../xml/xsd.ts');
    return {
      xsd: schemaToXsd(spec),
      example: schemaToExample(spec),
      prompt: schemaToPrompt(spec, l.name, l.description),
    };
  }

  /** Queue depth and running handlers per listener, for health and metrics. */
  stats(): BusStats {
    const queues: Record<string, { depth: number; active: number }> = {};
    for (const [name, q] of this.bus.queues) queues[name] = { depth: q.depth, active: q.active };
    const { threads, frames } = this.bus.threads.size;
    return { inFlight: this.inFlight.total, threads, frames, queues };
  }

  /** Queue state of one listener (API), or undefined when there is no such listener. */
  listenerState(name: string): ListenerState | undefined {
    const listener = this.bus.listeners.get(name);
    const queue = this.bus.queues.get(name);
    if (!listener || !queue) return undefined;
    return {
      paused: queue.isPaused,
      depth: queue.depth,
      active: queue.active,
      capacity: listener.queueLength,
      concurrency: listener.maxConcurrent,
    };
  }

  /** True while any listener's queue refuses new work; ingress may turn callers away early. */
  get saturated(): boolean {
    for (const [name, queue] of this.bus.queues) if (queue.full && this.bus.listeners.has(name)) return true;
    return false;
  }

  /** Registry status while the thread is live; after collection (or a restart) what history says. */
  #threadStatus(id: string, stoppedInHistory: boolean): ThreadStatus {
    const state = this.bus.threads.thread(id);
    if (state) return this.bus.threads.status(state);
    return stoppedInHistory ? 'stopped' : 'idle';
  }
}

/**
 * Threads ordered by last activity, newest first (ties by id), so a cursor `<updated>:<thread>`
 * names a fixed place in that order: the next page starts right after it even when other threads
 * were added meanwhile.
 */
export function listThreads(
  history: ThreadHistory,
  query: ThreadQuery,
  statusOf: (thread: string, stoppedInHistory: boolean) => ThreadStatus,
): ThreadPage {
  const after = parseThreadCursor(query.cursor);
  const matches: Array<{ updated: number; item: ThreadListItem }> = [];
  for (const summary of history.threads()) {
    if (query.since !== undefined && summary.updated < query.since) continue;
    if (query.listener !== undefined && !summary.participants.includes(query.listener)) continue;
    const status = statusOf(summary.thread, summary.stopped);
    if (query.status !== undefined && status !== query.status) continue;
    matches.push({
      updated: summary.updated,
      item: {
        thread: summary.thread,
        status,
        created: new Date(summary.created).toISOString(),
        updated: new Date(summary.updated).toISOString(),
        messages: summary.messages,
        dropped: summary.dropped,
        participants: summary.participants,
      },
    });
  }
  const order = (
    a: { updated: number; item: ThreadListItem },
    b: { updated: number; item: ThreadListItem },
  ) => b.updated - a.updated || (a.item.thread < b.item.thread ? 1 : a.item.thread > b.item.thread ? -1 : 0);
  matches.sort(order);
  let start = 0;
  if (after) {
    start = matches.findIndex(
      (t) => t.updated < after.updated || (t.updated === after.updated && t.item.thread < after.thread),
    );
    if (start < 0) start = matches.length;
  }
  const page = matches.slice(start, start + query.limit);
  const last = page[page.length - 1];
  const next = last && start + query.limit < matches.length ? `${last.updated}:${last.item.thread}` : null;
  return { threads: page.map((t) => t.item), total: matches.length, next };
}

function parseThreadCursor(cursor: string | undefined): { updated: number; thread: string } | undefined {
  if (!cursor) return undefined;
  const cut = cursor.indexOf(':');
  const updated = Number(cursor.slice(0, cut));
  if (cut <= 0 || !Number.isFinite(updated)) return undefined;
  return { updated, thread: cursor.slice(cut + 1) };
}

/** The recent-messages window, newest first; the cursor is the `seq` of the last message shown. */
export function listMessages(history: ThreadHistory, query: MessageQuery): MessagePage {
  const before = query.cursor !== undefined && /^\d+$/.test(query.cursor) ? Number(query.cursor) : undefined;
  const { messages, next } = history.recent(query.limit, before, (thread, entry) => {
    if (query.thread !== undefined && thread !== query.thread) return false;
    if (query.listener !== undefined && entry.from !== query.listener && entry.to !== query.listener)
      return false;
    if (query.kind !== undefined && entry.kind !== query.kind) return false;
    if (query.since !== undefined && entry.time < query.since) return false;
    return true;
  });
  return {
    messages: messages.map((m) => ({ thread: m.thread, ...toView(m.entry) })),
    next: next === null ? null : String(next),
  };
}
