/**
 * Listing threads and messages for the API: filters and cursor pages over the thread history.
 * Kept out of bus.ts because none of it is on the message path.
 */
import type {
  MessagePage,
  MessageQuery,
  ThreadListItem,
  ThreadPage,
  ThreadQuery,
  ThreadStatus,
} from './api.ts';
import { type ThreadHistory, toView } from './history/index.ts';

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
