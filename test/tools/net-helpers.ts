/**
 * Helpers for the calculate / fetch_url / webhook / web_search tests: a hand-built ToolRunContext
 * and real HTTP servers on loopback.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OrganismConfig, ToolConfig } from '../../src/config/types.ts';
import type { ResourceCache, ToolRunContext, ToolServices } from '../../src/tools/types.ts';

/** A ResourceCache over a Map; entries given up front are returned instead of being created. */
export function mapResources(
  preset: Record<string, unknown> = {},
): ResourceCache & { closeAll(): Promise<void> } {
  const values = new Map<string, unknown>(Object.entries(preset));
  const closers: (() => void | Promise<void>)[] = [];
  return {
    async get<T>(
      key: string,
      create: () => T | Promise<T>,
      close?: (r: T) => void | Promise<void>,
    ): Promise<T> {
      if (values.has(key)) return values.get(key) as T;
      const made = await create();
      values.set(key, made);
      if (close) closers.push(() => close(made));
      return made;
    },
    async closeAll() {
      for (const c of closers) await c();
    },
  };
}

export interface ContextOptions {
  config?: ToolConfig;
  /** Extra organism.yaml sections (web_search, ...). */
  sections?: Record<string, unknown>;
  resources?: Record<string, unknown>;
  signal?: AbortSignal;
  callId?: string;
}

export function makeContext(options: ContextOptions = {}): ToolRunContext {
  const config = {
    file: '/tmp/organism.yaml',
    listeners: [],
    ...options.sections,
  } as unknown as OrganismConfig;
  const services: ToolServices = { config, resources: mapResources(options.resources) };
  return {
    signal: options.signal ?? new AbortController().signal,
    listener: 'tester',
    thread: 'thread-1',
    callId: options.callId ?? 'call-1',
    config: options.config ?? {},
    workspace: '/tmp',
    dataDir: '/tmp',
    services,
  };
}

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  /** The local address the connection arrived on (which of several loopback addresses was dialled). */
  localAddress: string;
}

export interface TestServer {
  server: Server;
  port: number;
  /** `http://127.0.0.1:<port>` (or the host given). */
  url: string;
  requests: SeenRequest[];
  close(): Promise<void>;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => unknown;

/** A real node:http server on `host` (127.0.0.1 by default), port 0 unless given; records each request. */
export async function startServer(handler: Handler, host = '127.0.0.1', port = 0): Promise<TestServer> {
  const requests: SeenRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body,
        localAddress: req.socket.localAddress ?? '',
      });
      Promise.resolve(handler(req, res, body)).catch((error) => {
        res.statusCode = 500;
        res.end(String(error));
      });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const actual = (server.address() as AddressInfo).port;
  return {
    server,
    port: actual,
    url: `http://${host}:${actual}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A port that was just free: listen on 0, read the port, close. Nothing listens there afterwards. */
export async function closedPort(): Promise<number> {
  const s = await startServer(() => {});
  await s.close();
  return s.port;
}

/** Runs `fn` and returns what it threw (fails the test when it does not throw). */
export async function caught(
  fn: () => Promise<unknown>,
): Promise<Error & { code?: string; details?: Record<string, unknown> }> {
  try {
    await fn();
  } catch (error) {
    return error as Error & { code?: string; details?: Record<string, unknown> };
  }
  throw new Error('expected the call to throw, but it returned');
}
