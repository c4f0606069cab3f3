/**
 * Live events for GET /api/v1/stream: every message recorded in a thread, every tool call with its
 * guard verdict, and lifecycle events (threads starting, going idle, stopping; listeners paused,
 * resumed, added, removed, replaced; reloads). The daemon publishes into one EventHub; each
 * WebSocket client holds a filter (listeners, threads, kinds).
 */
import { MESSAGE_KINDS, type MessageKind, type MessageView } from '../bus/message.ts';
import type { Approval } from '../tools/approval/types.ts';

export interface MessageEvent {
  type: 'message';
  /** The message's kind: message, response, huh, system-error, tool-call, tool-result. */
  kind: MessageKind;
  thread: string;
  message: MessageView;
}

export interface ToolEvent {
  type: 'tool';
  kind: 'tool';
  thread: string;
  listener: string;
  tool: string;
  call_id: string;
  verdict: 'allow' | 'warn' | 'deny' | null;
  rule_id: string | null;
  reason: string | null;
  outcome: 'ok' | 'refused' | 'error';
  code: string | null;
  duration_ms: number;
  time: string;
}

export type LifecycleName =
  | 'thread.started'
  | 'thread.idle'
  | 'thread.stopped'
  | 'listener.paused'
  | 'listener.resumed'
  | 'listener.added'
  | 'listener.removed'
  | 'listener.replaced'
  | 'organism.reloaded'
  | 'organism.reload_refused'
  | 'organism.stopping';

export interface LifecycleEvent {
  type: 'lifecycle';
  kind: 'lifecycle';
  event: LifecycleName;
  time: string;
  thread?: string;
  listener?: string;
  by?: string;
  detail?: string;
}

/** A tool call began waiting for a person's approval, or was decided (README "Approval"). */
export interface ApprovalEvent {
  type: 'approval';
  kind: 'approval';
  event: 'requested' | 'approved' | 'denied' | 'timed_out';
  thread: string;
  listener: string;
  tool: string;
  approval: Approval;
  time: string;
}

export type StreamEvent = MessageEvent | ToolEvent | LifecycleEvent | ApprovalEvent;

/** Kinds a client may filter on: the message kinds, `tool`, `lifecycle` and `approval`. */
export const EVENT_KINDS: readonly string[] = [...MESSAGE_KINDS, 'tool', 'lifecycle', 'approval'];

export interface StreamFilter {
  listeners?: ReadonlySet<string>;
  threads?: ReadonlySet<string>;
  kinds?: ReadonlySet<string>;
}

/**
 * An event passes when it passes every filter given. `listeners` matches a message's sender or
 * receiver, a tool call's listener or tool, a lifecycle event's listener; `threads` its thread.
 * Organism-wide lifecycle events (a reload, stopping) carry neither and pass both: a client
 * watching one listener still learns that the organism changed under it.
 */
export function matches(filter: StreamFilter, event: StreamEvent): boolean {
  if (filter.kinds && !filter.kinds.has(event.kind)) return false;
  const wide = event.type === 'lifecycle' && event.thread === undefined && event.listener === undefined;
  if (filter.threads && !wide) {
    const thread = event.type === 'lifecycle' ? event.thread : event.thread;
    if (thread === undefined || !filter.threads.has(thread)) return false;
  }
  if (filter.listeners && !wide) {
    const names =
      event.type === 'message'
        ? [event.message.from, event.message.to]
        : event.type === 'tool' || event.type === 'approval'
          ? [event.listener, event.tool]
          : [event.listener];
    if (!names.some((n) => n !== undefined && filter.listeners!.has(n))) return false;
  }
  return true;
}

/** A filter from `{listeners?, threads?, kinds?}` (arrays or comma-separated strings); a string says what is wrong. */
export function parseFilter(input: unknown): StreamFilter | string {
  if (input === undefined || input === null) return {};
  if (typeof input !== 'object' || Array.isArray(input))
    return 'subscribe takes an object {listeners?, threads?, kinds?}';
  const filter: { listeners?: Set<string>; threads?: Set<string>; kinds?: Set<string> } = {};
  for (const [key, raw] of Object.entries(input as Record<string, unknown>)) {
    if (key !== 'listeners' && key !== 'threads' && key !== 'kinds')
      return `unknown filter '${key}'; use listeners, threads or kinds`;
    const list = typeof raw === 'string' ? raw.split(',').filter(Boolean) : raw;
    if (!Array.isArray(list) || !list.every((v) => typeof v === 'string' && v.length > 0 && v.length <= 200))
      return `${key} must be a list of names`;
    if (list.length > 1000) return `${key} may list at most 1000 names`;
    if (key === 'kinds') {
      const bad = list.find((k) => !EVENT_KINDS.includes(k));
      if (bad !== undefined) return `unknown kind '${bad}'; kinds are ${EVENT_KINDS.join(', ')}`;
    }
    if (list.length > 0) filter[key] = new Set(list as string[]);
  }
  return filter;
}

export function filterToJson(filter: StreamFilter): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  if (filter.listeners) out.listeners = [...filter.listeners];
  if (filter.threads) out.threads = [...filter.threads];
  if (filter.kinds) out.kinds = [...filter.kinds];
  return out;
}

export type EventSink = (event: StreamEvent) => void;

/** Fan-out to subscribers. Publishers check `size` first so that nobody listening costs nothing. */
export class EventHub {
  readonly #sinks = new Set<EventSink>();

  get size(): number {
    return this.#sinks.size;
  }

  subscribe(sink: EventSink): () => void {
    this.#sinks.add(sink);
    return () => this.#sinks.delete(sink);
  }

  publish(event: StreamEvent): void {
    for (const sink of this.#sinks) {
      try {
        sink(event);
      } catch {
        // One broken client must not stop the others (or the bus hook that published).
      }
    }
  }

  lifecycle(
    event: LifecycleName,
    fields: Omit<LifecycleEvent, 'type' | 'kind' | 'event' | 'time'> = {},
  ): void {
    if (this.#sinks.size === 0) return;
    this.publish({ type: 'lifecycle', kind: 'lifecycle', event, time: new Date().toISOString(), ...fields });
  }
}
