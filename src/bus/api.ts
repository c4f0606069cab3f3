/**
 * What the outside (HTTP server, CLI, tests) may ask of a running bus. The server depends on this
 * interface only, never on the Bus class.
 */
import type { Capability } from '../tools/types.ts';
import type { MessageKind, MessageView } from './message.ts';

export interface InjectRequest {
  /** Target listener; when absent the payload's root tag routes it. */
  to?: string;
  /** Payload XML text, untrusted: parsed with limits, refused when dirty. */
  payload: string;
  /** Continue an existing thread; absent starts a new one. */
  thread?: string;
  /** Name recorded as the sender, e.g. `api` or `cli`. Never a listener's name. */
  from?: string;
  /** Capability scope for the thread; tools used in it are limited to these. Never widens. */
  scope?: readonly Capability[];
  /** W3C traceparent of the caller (HTTP header): the first hops join its trace (tracing on). */
  traceparent?: string;
  /**
   * Told the new thread's id before its first message is published (a continued thread: never),
   * so a caller can tie something to the thread before anything in it runs (an MCP call binds its
   * client there). Local to this process, like the request itself: nothing of it travels.
   */
  started?: (thread: string) => void;
}

export interface InjectResult {
  thread: string;
  message: string;
}

/** active: work queued or running; idle: nothing in flight right now; stopped: a budget ended it. */
export type ThreadStatus = 'active' | 'idle' | 'stopped';

export interface ThreadView {
  thread: string;
  status: ThreadStatus;
  created: string;
  messages: MessageView[];
}

export interface ListenerInfo {
  name: string;
  description: string;
  tag: string;
  agent: boolean;
  peers: readonly string[];
  broadcast: boolean;
  tools: readonly string[];
}

export interface ThreadWatcher {
  /** Each message recorded in the thread, in order, from the moment of watching. */
  onMessage(message: MessageView): void;
  /** The thread has nothing queued or running (it may still get more work later). */
  onIdle?(): void;
}

export interface BusApi {
  /** Throws XmlError, PayloadValidationError, RoutingError, BusyError, ThreadNotFoundError or ShuttingDownError. */
  inject(request: InjectRequest): Promise<InjectResult>;
  thread(id: string): ThreadView | undefined;
  /** Returns an unsubscribe function. */
  watch(thread: string, watcher: ThreadWatcher): () => void;
  listeners(): ListenerInfo[];
  /** Payload XSD, example XML and prompt fragment for a listener (organism describe). */
  describe(listener: string): Promise<{ xsd: string; example: string; prompt: string } | undefined>;
  /**
   * A reply's payload XML (as a thread's history holds it) as an object: decoded by `listener`'s
   * response schema when it is under that schema's tag, else generically (text values). Its root
   * tag with it. Throws XmlError for text that does not parse within the limits.
   */
  decodeReply(listener: string, payload: string): { tag: string; payload: Record<string, unknown> };
  /**
   * Several daemons (shared thread state): brings a thread this daemon has not seen into its
   * history, so thread() answers for it. Absent, or a no-op, with one daemon.
   */
  loadThread?(id: string): Promise<void>;
}

/** GET /threads: newest activity first, filtered, a page at a time. */
export interface ThreadQuery {
  status?: ThreadStatus;
  /** Threads in which this name sent or received a message. */
  listener?: string;
  /** Threads with activity at or after this time (epoch ms). */
  since?: number;
  limit: number;
  /** `next` of the previous page. */
  cursor?: string;
}

export interface ThreadListItem {
  thread: string;
  status: ThreadStatus;
  created: string;
  updated: string;
  /** Messages kept (see `dropped` for those the per-thread bound let go). */
  messages: number;
  dropped: number;
  /** Names that sent or received messages in the thread (listeners, tools, `api`, `system`). */
  participants: string[];
}

export interface ThreadPage {
  threads: ThreadListItem[];
  /** Threads matching the filters (all pages). */
  total: number;
  /** Cursor for the next page; null on the last. */
  next: string | null;
}

/** GET /messages: the most recent messages across threads, newest first. */
export interface MessageQuery {
  thread?: string;
  /** Messages from or to this name. */
  listener?: string;
  kind?: MessageKind;
  since?: number;
  limit: number;
  cursor?: string;
}

export interface MessagePage {
  messages: Array<MessageView & { thread: string }>;
  next: string | null;
}

/** A listener's queue as the API shows it. */
export interface ListenerState {
  paused: boolean;
  depth: number;
  active: number;
  /** Messages the queue holds at most (queue_length). */
  capacity: number;
  /** Handlers that may run at once (max_concurrent): what `active` is measured against. */
  concurrency: number;
}

/** What the bus holds right now, for health, metrics and tests. */
export interface BusStats {
  /** Messages queued or running, on this daemon. */
  inFlight: number;
  /** Threads the registry holds (idle ones until they are forgotten). */
  threads: number;
  /** Call-chain frames the registry holds: a frame nothing can answer any more should not stay. */
  frames: number;
  queues: Record<string, { depth: number; active: number }>;
}

/** Read-only views the API lists from (the Bus implements them next to BusApi). */
export interface BusQueries {
  listThreads(query: ThreadQuery): ThreadPage;
  /** Ids of the threads in this daemon's history starting with `prefix`, at most `limit`. */
  threadIdsStartingWith(prefix: string, limit: number): string[];
  listMessages(query: MessageQuery): MessagePage;
  listenerState(name: string): ListenerState | undefined;
}
