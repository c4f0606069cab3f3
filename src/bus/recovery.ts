/**
 * Recovery (single-daemon mode): the messages the journal holds as accepted and never handled are
 * queued again at start, before any new work, in journal order (so in their order within each
 * thread). Their threads and frames are rebuilt in the registry from what the journal kept, the
 * listener's bounded queue takes them all (its capacity is raised for them, so none is refused as
 * busy; new offers are refused until it drains below its length), and each counts in flight as a
 * published message does. A thread stopped before the crash (kill, budget) drops its messages.
 *
 * A handler run again makes the same outputs with the same ids (derived from the message id and
 * their place, see publish.ts); one the journal already holds is not sent again, since it replays
 * on its own (or was handled). Its tool calls have the same call ids, so side-effecting tools act
 * once (src/tools/once.ts).
 */
import type { BusContext } from './bus-context.ts';
import type { InFlight } from './in-flight.ts';
import type { PendingMessage } from './journal/journal.ts';
import type { ThreadState } from './threads.ts';
import { MemoryTransport } from './transport/memory.ts';

export interface RecoveryReport {
  /** Messages queued again. */
  recovered: number;
  /** Messages whose listener no longer exists: marked handled, dropped. */
  dropped: number;
  threads: number;
}

export function recoverJournaled(bus: BusContext, inFlight: InFlight): RecoveryReport {
  const report: RecoveryReport = { recovered: 0, dropped: 0, threads: 0 };
  const transport = bus.transport;
  if (!(transport instanceof MemoryTransport) || !transport.journal) return report;
  const pending = transport.journal.takePending();
  if (pending.length === 0) return report;
  const threads = adoptThreads(bus, pending);
  report.threads = threads.size;
  // Every recovered message fits its queue: capacity raised by as many, then set back.
  const extra = new Map<string, number>();
  for (const { message } of pending) extra.set(message.to, (extra.get(message.to) ?? 0) + 1);
  for (const [name, count] of extra) {
    const listener = bus.listeners.get(name);
    const queue = bus.queues.get(name);
    if (listener && queue)
      queue.configure({ capacity: listener.queueLength + count, maxConcurrent: listener.maxConcurrent });
  }
  try {
    for (const { message, frames } of pending) {
      const thread = threads.get(message.thread)!;
      // Parents first, so each frame finds its parent's children set.
      for (let i = frames.length - 1; i >= 0; i--) {
        const [id, listener, caller, parent, depth] = frames[i]!;
        bus.threads.adoptFrame({ id, thread: thread.id, listener, caller, parent, depth, stored: false });
      }
      thread.inFlight++;
      inFlight.total++;
      if (transport.redeliver(message)) report.recovered++;
      else {
        inFlight.settle(thread);
        report.dropped++;
      }
    }
  } finally {
    for (const name of extra.keys()) {
      const listener = bus.listeners.get(name);
      const queue = bus.queues.get(name);
      if (listener && queue)
        queue.configure({ capacity: listener.queueLength, maxConcurrent: listener.maxConcurrent });
    }
  }
  return report;
}

/** The registry's thread for each recovered message's thread, rebuilt where it has none. */
function adoptThreads(bus: BusContext, pending: readonly PendingMessage[]): Map<string, ThreadState> {
  const threads = new Map<string, ThreadState>();
  const now = Date.now();
  for (const { message, scope } of pending) {
    let thread = threads.get(message.thread);
    if (!thread) {
      thread = bus.threads.adopt({
        id: message.thread,
        created: bus.history.summary(message.thread)?.created ?? message.time,
        lastActive: now,
        hops: 0,
        inFlight: 0,
        stopped: bus.history.summary(message.thread)?.stopped === true,
        scope: scope ? (Object.freeze([...scope]) as ThreadState['scope']) : undefined,
        frames: new Set(),
      });
      threads.set(message.thread, thread);
    }
    // The hop budget goes on from where the thread was.
    thread.hops = Math.max(thread.hops, message.hop);
  }
  return threads;
}
