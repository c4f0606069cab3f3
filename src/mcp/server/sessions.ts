/**
 * MCP sessions on /mcp (Streamable HTTP): an initialize opens one (Mcp-Session-Id), its Server and
 * the SDK's transport live until DELETE, the idle time, or the daemon's end. Each answers over SSE,
 * so notifications sent during a call arrive before its result; what a session sent is kept in a
 * bounded store for a client that reconnects with Last-Event-ID.
 *
 * A session belongs to the credential that opened it: the same token name and role, or it is not
 * found (one answer for unknown, ended and someone else's, so a token learns nothing of others'
 * sessions). The role is the one it was opened with, for every request of the session.
 *
 * Bounded: at most `max_sessions` at once (an initialize past it is refused), at most
 * `max_sessions_per_token` of them one credential's (past it that credential's least recently used
 * idle session is ended, or, all busy, the initialize is refused: one client, a viewer's, cannot
 * take every session and lock the others out), and a session with no request, no call running
 * and no stream open for `session_idle_ms` is ended.
 */
import { randomUUID } from 'node:crypto';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { McpSessionError } from '../../errors.ts';
import type { Principal } from '../../server/auth.ts';
import { BoundedEventStore } from './event-store.ts';
import type { McpHost } from './host.ts';
import { mcpServeOptions } from './options.ts';
import { createMcpServer } from './server.ts';
import { newSessionState, type SessionState } from './session-handlers.ts';

interface Session {
  readonly id: string;
  readonly principal: Principal;
  readonly transport: WebStandardStreamableHTTPServerTransport;
  readonly server: Server;
  readonly state: SessionState;
  /** The protocol version initialize agreed on. */
  readonly version: string;
  lastSeen: number;
  /** Requests being handled and streams open: a busy session never expires. */
  busy: number;
  ended: boolean;
}

/** A JSON-RPC error answer, as MCP clients read them; `data.code` is the organism's stable code. */
export function rpcError(
  status: number,
  error: McpSessionError | { code: string; message: string },
  headers = {},
) {
  return new Response(
    JSON.stringify({
      jsonrpc: '2.0',
      error: { code: status === 404 ? -32001 : -32000, message: error.message, data: { code: error.code } },
      id: null,
    }),
    { status, headers: { 'content-type': 'application/json', ...headers } },
  );
}

export class McpSessions {
  readonly #host: McpHost;
  readonly #version: string;
  readonly #sessions = new Map<string, Session>();
  readonly #now: () => number;
  /** Initializes under way: they count against the cap before their id exists. */
  #opening = 0;
  /** The same, by credential (credentialKey), for the per-token cap. */
  readonly #openingBy = new Map<string, number>();
  #sweeper: NodeJS.Timeout | undefined;

  constructor(host: McpHost, version: string, now: () => number = Date.now) {
    this.#host = host;
    this.#version = version;
    this.#now = now;
  }

  get size(): number {
    return this.#sessions.size;
  }

  /** An initialize: a new session for `principal`, unless the cap is reached. */
  async open(request: Request, body: unknown, principal: Principal): Promise<Response> {
    const options = mcpServeOptions(this.#host.deps.config());
    this.#sweep(options.session_idle_ms);
    if (this.#sessions.size + this.#opening >= options.max_sessions) {
      const error = new McpSessionError(
        'mcp.session_limit',
        `this organism already holds ${options.max_sessions} MCP sessions, the most it keeps (mcp.max_sessions); end one (DELETE /mcp) or retry when one has been idle for mcp.session_idle_ms (${options.session_idle_ms} ms)`,
      );
      return rpcError(503, error, { 'retry-after': '1' });
    }
    const refusal = this.#makeRoomFor(principal, options.max_sessions_per_token);
    if (refusal) return refusal;
    const state = newSessionState(undefined);
    let session: Session | undefined;
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      eventStore: new BoundedEventStore(options.replay_events, options.replay_bytes),
      retryInterval: options.sse_retry_ms,
      onsessioninitialized: (id) => {
        (state as { id: string | undefined }).id = id;
        session = {
          id,
          principal: { name: principal.name, role: principal.role },
          transport,
          server,
          state,
          version: negotiated(body),
          lastSeen: this.#now(),
          busy: 0,
          ended: false,
        };
        this.#sessions.set(id, session);
        this.#arm(options.session_idle_ms);
      },
      onsessionclosed: (id) => {
        const ended = this.#sessions.get(id);
        if (ended) this.#forget(ended);
      },
    });
    const server = createMcpServer(this.#host, principal, this.#version, state);
    transport.onclose = () => {
      if (session) this.#forget(session);
    };
    await server.connect(transport);
    const key = credentialKey(principal);
    this.#opening++;
    this.#openingBy.set(key, (this.#openingBy.get(key) ?? 0) + 1);
    try {
      return await transport.handleRequest(request, { parsedBody: body });
    } finally {
      this.#opening--;
      const left = (this.#openingBy.get(key) ?? 1) - 1;
      if (left > 0) this.#openingBy.set(key, left);
      else this.#openingBy.delete(key);
      // An initialize that did not make a session (refused by the transport) leaves nothing behind.
      if (!session) void server.close();
    }
  }

  /**
   * Keeps `principal` within its share: at `perToken` sessions its least recently used idle one is
   * ended (its own, never another credential's); all busy, the refusal to answer with.
   */
  #makeRoomFor(principal: Principal, perToken: number): Response | undefined {
    const mine = [...this.#sessions.values()].filter((s) => sameCredential(s.principal, principal));
    const opening = this.#openingBy.get(credentialKey(principal)) ?? 0;
    let over = mine.length + opening - perToken + 1;
    const idle = mine.filter((s) => s.busy === 0).sort((a, b) => a.lastSeen - b.lastSeen);
    for (const session of idle) {
      if (over <= 0) break;
      this.#end(session);
      over--;
    }
    if (over <= 0) return undefined;
    const error = new McpSessionError(
      'mcp.session_limit',
      `token '${principal.name}' already holds ${mine.length + opening} MCP sessions, each busy (a call running or a stream open), the most one token may (mcp.max_sessions_per_token: ${perToken}); end one (DELETE /mcp) first`,
    );
    return rpcError(503, error, { 'retry-after': '1' });
  }

  /**
   * A request on an existing session: POST (messages), GET (its stream, or a resume), DELETE.
   * `ended`: how the server says an answer is over (see AnswerEnded).
   */
  async handle(
    request: Request,
    body: unknown,
    principal: Principal,
    id: string,
    ended?: AnswerEnded,
  ): Promise<Response> {
    const idle = mcpServeOptions(this.#host.deps.config()).session_idle_ms;
    const session = this.#sessions.get(id);
    if (session && session.busy === 0 && this.#now() - session.lastSeen > idle) this.#end(session);
    if (!session || session.ended || !sameCredential(session.principal, principal)) {
      return rpcError(
        404,
        new McpSessionError(
          'mcp.session_not_found',
          `no MCP session ${id.slice(0, 64)} for token '${principal.name}': it ended, was idle longer than mcp.session_idle_ms (${idle} ms), or was opened with another token; initialize a new session`,
        ),
      );
    }
    session.lastSeen = this.#now();
    session.busy++;
    let response: Response;
    try {
      response = await session.transport.handleRequest(
        atVersion(request, session.version),
        body === undefined ? {} : { parsedBody: body },
      );
    } catch (error) {
      this.#idle(session);
      throw error;
    }
    // A stream (a call's answer, the GET stream) keeps the session busy for as long as it is open.
    if (ended && isEventStream(response)) {
      ended(() => this.#idle(session));
      return response;
    }
    this.#idle(session);
    return response;
  }

  /** Every session ends (the daemon stops). */
  async closeAll(): Promise<void> {
    for (const session of [...this.#sessions.values()]) this.#end(session);
  }

  #idle(session: Session): void {
    session.busy--;
    session.lastSeen = this.#now();
  }

  #end(session: Session): void {
    if (session.ended) return;
    this.#forget(session);
    void session.transport.close().catch(() => {});
    void session.server.close().catch(() => {});
  }

  #forget(session: Session): void {
    session.ended = true;
    if (this.#sessions.get(session.id) === session) this.#sessions.delete(session.id);
    this.#host.subscriptions.dropSession(session.id);
    if (this.#sessions.size === 0 && this.#sweeper) {
      clearInterval(this.#sweeper);
      this.#sweeper = undefined;
    }
  }

  #sweep(idleMs: number): void {
    const now = this.#now();
    for (const session of [...this.#sessions.values()])
      if (session.busy === 0 && now - session.lastSeen > idleMs) this.#end(session);
  }

  /** One timer while sessions exist; it does not keep the process alive. */
  #arm(idleMs: number): void {
    if (this.#sweeper) return;
    const every = Math.min(Math.max(Math.floor(idleMs / 2), 50), 60_000);
    this.#sweeper = setInterval(
      () => this.#sweep(mcpServeOptions(this.#host.deps.config()).session_idle_ms),
      every,
    );
    this.#sweeper.unref();
  }
}

/** What the SDK's Server answers an initialize with: the version asked for if it knows it, else its latest. */
function negotiated(body: unknown): string {
  const init = (Array.isArray(body) ? body : [body]).find(
    (m) => (m as { method?: unknown } | null)?.method === 'initialize',
  ) as { params?: { protocolVersion?: unknown } } | undefined;
  const asked = init?.params?.protocolVersion;
  return typeof asked === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(asked)
    ? asked
    : LATEST_PROTOCOL_VERSION;
}

/**
 * The request as of the session's version: the transport decides per request, from the
 * MCP-Protocol-Version header, what a stream may carry (priming events, closing a call's stream for
 * polling), but the session agreed on its version at initialize. A header naming another supported
 * version (a client that sends a fixed older one) is read as the session's; an unsupported one is
 * left for the transport to refuse. The body was read already (parsedBody), so none is copied.
 */
function atVersion(request: Request, version: string): Request {
  const said = request.headers.get('mcp-protocol-version');
  if (said === null || said === version || !SUPPORTED_PROTOCOL_VERSIONS.includes(said)) return request;
  const headers = new Headers(request.headers);
  headers.set('mcp-protocol-version', version);
  return new Request(request.url, { method: request.method, headers, signal: request.signal });
}

function sameCredential(a: Principal, b: Principal): boolean {
  return a.name === b.name && a.role === b.role;
}

function credentialKey(p: Principal): string {
  return `${p.role}:${p.name}`;
}

/**
 * Registers a callback for when an answer has gone out or its client left (once): the Node
 * response's 'close', which a stream's end and a client that stops reading both lead to. Told by
 * the server rather than found by wrapping the answer's body: reading `body` makes the SDK's
 * lightweight answer a full Response, and a wrapper is one more stream every chunk goes through.
 */
export type AnswerEnded = (done: () => void) => void;

function isEventStream(response: Response): boolean {
  return response.headers.get('content-type')?.startsWith('text/event-stream') ?? false;
}
