/**
 * GET /api/v1/stream (WebSocket, the `ws` package): live events for `organism tail` and dashboards.
 *
 * Connect with `Authorization: Bearer <token>` (viewer role) and, optionally, an initial filter in
 * the query: `?listeners=a,b&threads=<id>&kinds=message,tool`. The server says
 * `{"type":"hello", ...}`, then sends one JSON event per frame (see events.ts). Send
 * `{"subscribe": {"listeners": [...], "threads": [...], "kinds": [...]}}` to change the filter.
 *
 * Bounded: at most `maxClients` connections (more get 503), client frames up to 64 KiB, and a
 * client that reads slower than events come gets events dropped (not buffered without end); it is
 * told `{"type":"dropped","count":n}` once it catches up.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { WebSocket, WebSocketServer } from 'ws';
import { lazyRequire } from '../lazy-require.ts';
import { type Authenticator, isLoopbackHost, requireRole } from './auth.ts';
import { toHttpError } from './errors.ts';
import {
  type EventHub,
  filterToJson,
  matches,
  parseFilter,
  type StreamEvent,
  type StreamFilter,
} from './events.ts';
import { crossSiteRefusal } from './security.ts';

/** ws, loaded when the first client asks for the stream: a daemon nobody watches never pays for it. */
const wsModule = lazyRequire<typeof import('ws')>('ws');

export const STREAM_PATH = '/api/v1/stream';

/**
 * Browsers cannot set headers on a WebSocket, so the dashboard offers two subprotocols:
 * `organism.v1` and `organism.token.<base64url of the token>`. The second stands for
 * `Authorization: Bearer <token>` when that header is absent; the server selects the first.
 */
export const STREAM_PROTOCOL = 'organism.v1';
const TOKEN_PROTOCOL = 'organism.token.';

/** `Bearer <token>` from a Sec-WebSocket-Protocol list, or undefined. */
export function tokenFromProtocols(value: string | undefined): string | undefined {
  for (const item of (value ?? '').split(',')) {
    const protocol = item.trim();
    if (!protocol.startsWith(TOKEN_PROTOCOL)) continue;
    const encoded = protocol.slice(TOKEN_PROTOCOL.length);
    if (!/^[A-Za-z0-9_-]{1,1024}$/.test(encoded)) return undefined;
    return `Bearer ${Buffer.from(encoded, 'base64url').toString('utf8')}`;
  }
  return undefined;
}

export interface StreamOptions {
  hub: EventHub;
  auth: () => Authenticator;
  listenHost: string;
  logger: Logger;
  organism: () => string;
  maxClients?: number;
  /** Bytes queued to one client beyond which events for it are dropped. */
  maxBufferedBytes?: number;
  pingMs?: number;
}

interface Client {
  ws: WebSocket;
  filter: StreamFilter;
  dropped: number;
  alive: boolean;
  unsubscribe: () => void;
}

export class StreamServer {
  #server: WebSocketServer | undefined;
  readonly #clients = new Set<Client>();
  readonly #options: Required<StreamOptions>;
  readonly #pinger: NodeJS.Timeout;
  #lastEvent: StreamEvent | undefined;
  #lastText = '';

  constructor(options: StreamOptions) {
    this.#options = { maxClients: 64, maxBufferedBytes: 4 * 1024 * 1024, pingMs: 30_000, ...options };
    // A client that does not answer two pings in a row is gone (network cut): close it.
    this.#pinger = setInterval(() => {
      for (const client of this.#clients) {
        if (!client.alive) {
          client.ws.terminate();
          continue;
        }
        client.alive = false;
        client.ws.ping();
      }
    }, this.#options.pingMs);
    this.#pinger.unref();
  }

  get clients(): number {
    return this.#clients.size;
  }

  /** The http server's 'upgrade' handler. */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    const admitted = this.#admit(request);
    if ('status' in admitted) {
      reject(socket, admitted);
      return;
    }
    this.#wss().handleUpgrade(request, socket, head, (client) =>
      this.#connected(client, admitted.filter, admitted.by),
    );
  }

  #wss(): WebSocketServer {
    this.#server ??= new (wsModule().WebSocketServer)({
      noServer: true,
      maxPayload: 64 * 1024,
      // A browser offers the token as a subprotocol (see tokenFromProtocols); the answer names only
      // the plain protocol, so the token is never echoed back.
      handleProtocols: (offered) => (offered.has(STREAM_PROTOCOL) ? STREAM_PROTOCOL : false),
    });
    return this.#server;
  }

  /** Path, origin, token, role, filter and room, in that order: the first refusal, or the client's terms. */
  #admit(request: IncomingMessage): Refusal | { filter: StreamFilter; by: string } {
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (url.pathname !== STREAM_PATH)
      return { status: 404, code: 'request.not_found', message: `no WebSocket at ${url.pathname}` };
    const crossSite = crossSiteRefusal(
      {
        origin: header(request, 'origin'),
        host: header(request, 'host'),
        fetchSite: header(request, 'sec-fetch-site'),
      },
      isLoopbackHost(this.#options.listenHost),
    );
    if (crossSite) return { status: 403, code: 'request.cross_origin', message: crossSite };
    let by: string;
    try {
      const principal = this.#options
        .auth()
        .authenticate(
          header(request, 'authorization') ?? tokenFromProtocols(header(request, 'sec-websocket-protocol')),
        );
      requireRole(principal, 'viewer', 'reading the stream');
      by = principal.name;
    } catch (error) {
      const mapped = toHttpError(error);
      return {
        status: mapped.status,
        code: mapped.body.error.code,
        message: mapped.body.error.message,
        headers: mapped.headers ?? {},
      };
    }
    const initial = Object.fromEntries(
      ['listeners', 'threads', 'kinds'].flatMap((k) =>
        url.searchParams.has(k) ? [[k, url.searchParams.get(k)]] : [],
      ),
    );
    const filter = parseFilter(initial);
    if (typeof filter === 'string') return { status: 400, code: 'request.query', message: filter };
    if (this.#clients.size >= this.#options.maxClients) {
      return {
        status: 503,
        code: 'stream.full',
        message: `at most ${this.#options.maxClients} stream clients at once`,
        headers: { 'retry-after': '5' },
      };
    }
    return { filter, by };
  }

  #connected(ws: WebSocket, filter: StreamFilter, by: string): void {
    const client: Client = { ws, filter, dropped: 0, alive: true, unsubscribe: () => {} };
    this.#clients.add(client);
    client.unsubscribe = this.#options.hub.subscribe((event) => {
      if (!matches(client.filter, event)) return;
      if (ws.readyState !== ws.OPEN) return;
      if (ws.bufferedAmount > this.#options.maxBufferedBytes) {
        client.dropped++;
        return;
      }
      if (client.dropped > 0) {
        ws.send(JSON.stringify({ type: 'dropped', count: client.dropped }));
        client.dropped = 0;
      }
      ws.send(this.#encode(event));
    });
    ws.on('pong', () => {
      client.alive = true;
    });
    ws.on('message', (data, isBinary) => {
      if (isBinary) return this.#send(ws, { type: 'error', message: 'send JSON text frames' });
      let parsed: unknown;
      try {
        parsed = JSON.parse(String(data));
      } catch {
        return this.#send(ws, {
          type: 'error',
          message: 'frames must be JSON, e.g. {"subscribe": {"kinds": ["message"]}}',
        });
      }
      const request = (parsed as { subscribe?: unknown } | null)?.subscribe;
      if (request === undefined)
        return this.#send(ws, { type: 'error', message: 'expected {"subscribe": {...}}' });
      const next = parseFilter(request);
      if (typeof next === 'string') return this.#send(ws, { type: 'error', message: next });
      client.filter = next;
      this.#send(ws, { type: 'subscribed', filter: filterToJson(next) });
    });
    ws.on('close', () => {
      client.unsubscribe();
      this.#clients.delete(client);
    });
    ws.on('error', (error) => this.#options.logger.debug({ err: error }, 'stream client error'));
    this.#options.logger.debug({ by }, 'stream client connected');
    this.#send(ws, { type: 'hello', organism: this.#options.organism(), filter: filterToJson(filter) });
  }

  /** The hub hands one event to every client in turn: it is serialized once, not once per client. */
  #encode(event: StreamEvent): string {
    if (event !== this.#lastEvent) {
      this.#lastEvent = event;
      this.#lastText = JSON.stringify(event);
    }
    return this.#lastText;
  }

  #send(ws: WebSocket, value: unknown): void {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(value));
  }

  /** Closes every client with 1001 (going away) and stops accepting. */
  close(): void {
    clearInterval(this.#pinger);
    for (const client of this.#clients) {
      client.unsubscribe();
      client.ws.close(1001, 'organism stopping');
    }
    // Clients that do not finish the closing handshake promptly are cut.
    const stragglers = [...this.#clients];
    setTimeout(() => {
      for (const c of stragglers) c.ws.terminate();
    }, 1000).unref();
    this.#clients.clear();
    this.#server?.close();
  }
}

function header(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  503: 'Service Unavailable',
};

interface Refusal {
  status: number;
  code: string;
  message: string;
  headers?: Record<string, string>;
}

function reject(socket: Duplex, refusal: Refusal): void {
  const body = JSON.stringify({ error: { code: refusal.code, message: refusal.message } });
  const lines = [
    `HTTP/1.1 ${refusal.status} ${REASONS[refusal.status] ?? 'Error'}`,
    'Connection: close',
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    ...Object.entries(refusal.headers ?? {}).map(([k, v]) => `${k}: ${v}`),
    '',
    body,
  ];
  socket.end(lines.join('\r\n'));
}
