/**
 * Operator actions on a running bus: kill a thread, pause and resume a listener's queue, and hot
 * reload (swap the set of listeners without dropping in-flight messages).
 */
import { OrganismError } from '../errors.ts';
import type { ThreadStatus } from './api.ts';
import type { BusContext } from './bus-context.ts';
import type { ReconfigureResult } from './bus-types.ts';
import { nextId } from './ids.ts';
import type { InFlight } from './in-flight.ts';
import type { Lifecycle } from './lifecycle.ts';
import { buildRuntimeListeners, type ListenerSpec } from './listeners.ts';
import { SYSTEM_SENDER, systemErrorXml } from './system.ts';

export class Control {
  constructor(
    private readonly bus: BusContext,
    private readonly inFlight: InFlight,
    private readonly lifecycle: Lifecycle,
  ) {}

  /**
   * Stops a thread now: it accepts no more messages, its queued messages are dropped, running
   * handlers in it see their signal abort (their output is discarded), and the history records a
   * `<SystemError><code>thread.killed</code>`. Undefined when the thread is unknown; idempotent otherwise.
   */
  kill(
    id: string,
    by = 'api',
  ): { thread: string; status: ThreadStatus; dropped: number; aborted: number } | undefined {
    const bus = this.bus;
    const state = bus.threads.thread(id);
    if (!state) {
      if (!bus.history.has(id)) return undefined;
      // Collected or from before a restart: nothing runs in it; it is marked so no one thinks otherwise.
      bus.history.markStopped(id);
      return { thread: id, status: 'stopped', dropped: 0, aborted: 0 };
    }
    if (state.stopped) return { thread: id, status: 'stopped', dropped: 0, aborted: 0 };
    state.stopped = true;
    let dropped = 0;
    for (const [name, queue] of bus.queues) {
      for (const delivery of queue.removeThread(id)) {
        dropped++;
        bus.hooks.delivered?.(name, 'dropped', Date.now() - delivery.message.time, id);
        this.inFlight.settle(state);
        delivery.done();
      }
    }
    let aborted = 0;
    for (const ctx of bus.running) {
      if (ctx.thread !== id) continue;
      aborted++;
      ctx.abort(new OrganismError('thread.killed', `thread ${id} was stopped by an operator`));
    }
    bus.record(id, nextId(), SYSTEM_SENDER, by, 'system-error', systemErrorXml('thread.killed'));
    bus.history.markStopped(id);
    bus.hooks.thread?.(id, 'stopped');
    bus.logger.info({ thread: id, by, dropped, aborted }, 'thread killed');
    return { thread: id, status: 'stopped', dropped, aborted };
  }

  /** Holds a listener's queue: messages still queue (up to its length), none start. False if unknown. */
  pause(name: string): boolean {
    const queue = this.bus.listeners.has(name) ? this.bus.queues.get(name) : undefined;
    queue?.pause();
    return queue !== undefined;
  }

  resume(name: string): boolean {
    const queue = this.bus.listeners.has(name) ? this.bus.queues.get(name) : undefined;
    queue?.resume();
    return queue !== undefined;
  }

  /**
   * Swaps the set of listeners for `specs` without dropping in-flight messages. Everything that can
   * fail (schema compilation) happens before anything changes, so a throw leaves the bus as it was.
   * - added: a queue and a transport subscription are opened;
   * - replaced: the new version takes every message from now on; messages already queued run with
   *   the version that accepted them; the queue (and a pause) stays, with the new length/concurrency;
   * - removed: no longer routed to; it finishes what is queued for it, then its queue and
   *   subscription close. Replies that reach it later are recorded in the thread only.
   */
  reconfigure(specs: readonly ListenerSpec[]): ReconfigureResult {
    const bus = this.bus;
    const next = buildRuntimeListeners(specs, bus.options.limits, bus.options.bus);
    const result: ReconfigureResult = { added: [], removed: [], replaced: [], unchanged: [] };
    for (const spec of specs) {
      const name = spec.config.name;
      const before = bus.specs.get(name);
      if (!before) result.added.push(name);
      else if (sameSpec(before, spec)) result.unchanged.push(name);
      else result.replaced.push(name);
    }
    for (const name of bus.listeners.keys()) if (!next.has(name)) result.removed.push(name);

    for (const name of result.removed) {
      bus.retiring.set(name, bus.listeners.get(name)!);
      bus.specs.delete(name);
      const queue = bus.queues.get(name);
      queue?.resume(); // a paused listener that is removed still finishes what it holds
      void queue?.idle().then(() => this.lifecycle.retire(name));
    }
    bus.listeners.clear();
    for (const [name, listener] of next) bus.listeners.set(name, listener);
    bus.indexTags();
    for (const spec of specs) bus.specs.set(spec.config.name, spec);
    for (const listener of next.values()) {
      const queue = bus.queues.get(listener.name);
      // Removed earlier and still finishing its work: it comes back on the same queue.
      bus.retiring.delete(listener.name);
      if (queue) queue.configure({ capacity: listener.queueLength, maxConcurrent: listener.maxConcurrent });
      else if (bus.started) this.lifecycle.open(listener);
    }
    return result;
  }
}

/**
 * Same organism.yaml entry, same tag and the same definition: a reload leaves the listener as it
 * is. A code listener's definition is its module's export, so a new object is a module loaded
 * anew. An agent's is built from its config by every reload, so it is compared by content: the
 * system prompt and functions it offers the model (its peers' and tools' descriptions included)
 * and the settings of the LLM client it asks (organism.yaml's `llm:` section).
 */
export function sameSpec(a: ListenerSpec, b: ListenerSpec): boolean {
  if (a.tag !== b.tag || JSON.stringify(a.config) !== JSON.stringify(b.config)) return false;
  if (a.definition === b.definition) return true;
  return isAgent(a) && isAgent(b) && agentContent(a) === agentContent(b);
}

function isAgent(spec: ListenerSpec): boolean {
  return spec.config.agent && spec.config.handler === undefined;
}

function agentContent({ definition }: ListenerSpec): string {
  const { description, payload, response } = definition;
  const { system, functions, llmSettings } = definition as {
    system?: unknown;
    functions?: unknown;
    llmSettings?: unknown;
  };
  return JSON.stringify({ description, payload, response, system, functions, llmSettings });
}
