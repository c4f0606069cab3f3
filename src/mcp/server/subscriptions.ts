/**
 * resources/subscribe by URI, for every kind of resource the MCP server offers: threads
 * (`organism://threads/<id>`, told by the bus on every recorded message) and whatever a feature
 * registers (src/mcp/server/features/*, a project's own resources). Whoever knows a resource
 * changed calls `changed(uri)`; each session subscribed to that URI gets
 * notifications/resources/updated. One per daemon (the McpHost holds it); nothing of the SDK.
 */

/** What a resource's owner calls to say its content changed (the hook features are given). */
export type ResourceChanged = (uri: string) => void;

/** How a session is told: it sends notifications/resources/updated for `uri` on its stream. */
export type UpdatedSink = (uri: string) => void;

/** Most URIs one session may watch at once; past it subscribe is refused with this number. */
export const MAX_SUBSCRIPTIONS_PER_SESSION = 256;

/**
 * Longest URI a session may subscribe to. The count alone bounds nothing: a URI is the client's
 * text, kept as long as the session lives, and 256 of a request body's size each is hundreds of MB.
 */
export const MAX_SUBSCRIBED_URI_CHARS = 4_096;

export class ResourceSubscriptions {
  /** uri -> session id -> sink */
  readonly #byUri = new Map<string, Map<string, UpdatedSink>>();
  /** session id -> its uris, to drop them all when the session ends */
  readonly #bySession = new Map<string, Set<string>>();
  /** Told when the set of watched URIs changes, so a source can start or stop listening. */
  readonly #watchers = new Set<() => void>();

  /** Adds `session`'s subscription to `uri`; false when the session already watches the most it may. */
  subscribe(session: string, uri: string, sink: UpdatedSink): boolean {
    let uris = this.#bySession.get(session);
    if (!uris) {
      uris = new Set();
      this.#bySession.set(session, uris);
    }
    if (!uris.has(uri) && uris.size >= MAX_SUBSCRIPTIONS_PER_SESSION) return false;
    uris.add(uri);
    let sinks = this.#byUri.get(uri);
    if (!sinks) {
      sinks = new Map();
      this.#byUri.set(uri, sinks);
    }
    sinks.set(session, sink);
    this.#told();
    return true;
  }

  unsubscribe(session: string, uri: string): void {
    this.#bySession.get(session)?.delete(uri);
    const sinks = this.#byUri.get(uri);
    if (!sinks?.delete(session)) return;
    if (sinks.size === 0) this.#byUri.delete(uri);
    this.#told();
  }

  /** A session ended: every subscription it held goes. */
  dropSession(session: string): void {
    const uris = this.#bySession.get(session);
    if (!uris) return;
    this.#bySession.delete(session);
    for (const uri of uris) {
      const sinks = this.#byUri.get(uri);
      sinks?.delete(session);
      if (sinks?.size === 0) this.#byUri.delete(uri);
    }
    this.#told();
  }

  /** True when some session watches `uri` (a source asks before building anything). */
  watched(uri: string): boolean {
    return this.#byUri.has(uri);
  }

  /** Every URI some session watches. */
  uris(): IterableIterator<string> {
    return this.#byUri.keys();
  }

  get size(): number {
    return this.#byUri.size;
  }

  /** The hook: every session subscribed to `uri` is told it changed. */
  readonly changed: ResourceChanged = (uri) => {
    const sinks = this.#byUri.get(uri);
    if (!sinks) return;
    for (const sink of sinks.values()) {
      try {
        sink(uri);
      } catch {
        // A session that cannot be told (its stream is gone) must not stop the others.
      }
    }
  };

  /** `fn` runs whenever a subscription is added or removed; the returned function stops that. */
  onChange(fn: () => void): () => void {
    this.#watchers.add(fn);
    return () => this.#watchers.delete(fn);
  }

  #told(): void {
    for (const fn of this.#watchers) fn();
  }
}
