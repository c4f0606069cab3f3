/**
 * What the outside (HTTP server, CLI, tests) may ask of a running bus. The server depends on this
 * interface only, never on the Bus class.
 */
import type { Capability } from '../tools/types.ts';
import type { MessageView } from './message.ts';

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
  describe(listener: string): { xsd: string; example: string; prompt: string } | undefined;
}
