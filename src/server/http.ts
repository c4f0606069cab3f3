/**
 * The HTTP API (minimum for part 1): health, inject, and thread history, plus a follow stream that
 * `organism send --wait` reads. Bound to 127.0.0.1 by default. Depends only on BusApi.
 */
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { type Context, Hono } from 'hono';
import type { Logger } from 'pino';
import type { BusApi } from '../bus/api.ts';
import type { MessageView } from '../bus/message.ts';
import { type HuhReason, huhXml } from '../bus/system.ts';
import { PayloadValidationError, RoutingError, XmlError } from '../errors.ts';
import { decodeUtf8Strict } from '../xml/parse.ts';
import { type HttpError, httpError, toHttpError } from './errors.ts';

export interface HttpServerOptions {
  host: string;
  port: number;
  /** Largest request body accepted, in bytes. */
  maxBodyBytes: number;
  logger: Logger;
}

export interface RunningServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

export function createApp(bus: BusApi, options: Pick<HttpServerOptions, 'maxBodyBytes' | 'logger'>): Hono {
  const app = new Hono();
  const fail = (c: Context, e: HttpError) => c.json(e.body, e.status as 400, e.headers);

  app.get('/healthz', (c) => c.json({ status: 'ok' }));

  app.post('/api/v1/inject', async (c) => {
    const body = await readJsonBody(c, options.maxBodyBytes);
    if ('status' in body) return fail(c, body);
    const { to, payload, thread } = body.value as Record<string, unknown>;
    if (typeof payload !== 'string')
      return fail(c, httpError(400, 'request.invalid', '`payload` must be a string of XML'));
    if (to !== undefined && typeof to !== 'string')
      return fail(c, httpError(400, 'request.invalid', '`to` must be a string'));
    if (thread !== undefined && typeof thread !== 'string') {
      return fail(c, httpError(400, 'request.invalid', '`thread` must be a string'));
    }
    try {
      const result = await bus.inject({ to, payload, thread, from: 'api' });
      return c.json(result, 202);
    } catch (error) {
      const mapped = toHttpError(error);
      if (mapped.status >= 500 && mapped.status !== 503)
        options.logger.error({ err: error }, 'inject failed');
      // Input that does not parse, validate or route also gets the <huh> a listener would get.
      const reason = huhReason(error);
      if (reason)
        return c.json({ ...mapped.body, huh: huhXml(reason, payload) }, mapped.status as 400, mapped.headers);
      return fail(c, mapped);
    }
  });

  app.get('/api/v1/threads/:id', (c) => {
    const view = bus.thread(c.req.param('id'));
    if (!view) return fail(c, httpError(404, 'thread.not_found', `thread not found: ${c.req.param('id')}`));
    return c.json(view);
  });

  // Newline-delimited JSON: the thread's messages so far, then live ones, then `{"idle": true}`.
  app.get('/api/v1/threads/:id/follow', (c) => {
    const id = c.req.param('id');
    const view = bus.thread(id);
    if (!view) return fail(c, httpError(404, 'thread.not_found', `thread not found: ${id}`));
    return followStream(bus, id, view.messages, view.status !== 'active');
  });

  app.get('/api/v1/listeners', (c) => c.json({ listeners: bus.listeners() }));

  app.notFound((c) => fail(c, httpError(404, 'not_found', `no route for ${c.req.method} ${c.req.path}`)));
  app.onError((error, c) => {
    options.logger.error({ err: error }, 'request failed');
    return fail(c, toHttpError(error));
  });
  return app;
}

function huhReason(error: unknown): HuhReason | undefined {
  if (error instanceof XmlError) return 'parse';
  if (error instanceof PayloadValidationError) return 'validate';
  if (error instanceof RoutingError) return 'route';
  return undefined;
}

async function readJsonBody(c: Context, maxBytes: number): Promise<{ value: unknown } | HttpError> {
  const declared = Number(c.req.header('content-length') ?? '0');
  if (declared > maxBytes) return httpError(413, 'request.too_large', `request body over ${maxBytes} bytes`);
  const type = c.req.header('content-type') ?? '';
  if (!type.includes('application/json')) {
    return httpError(415, 'request.content_type', 'send the request as application/json');
  }
  const bytes = new Uint8Array(await c.req.arrayBuffer());
  if (bytes.length > maxBytes)
    return httpError(413, 'request.too_large', `request body over ${maxBytes} bytes`);
  try {
    return { value: JSON.parse(decodeUtf8Strict(bytes)) };
  } catch (error) {
    return toHttpError(error).status === 500
      ? httpError(400, 'request.invalid_json', `request body is not valid JSON: ${(error as Error).message}`)
      : toHttpError(error);
  }
}

function followStream(bus: BusApi, thread: string, initial: MessageView[], idleNow: boolean): Response {
  const encoder = new TextEncoder();
  let unwatch: (() => void) | undefined;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      const line = (value: unknown) => controller.enqueue(encoder.encode(`${JSON.stringify(value)}\n`));
      const seen = new Set<string>();
      for (const m of initial) {
        seen.add(m.id);
        line(m);
      }
      const finish = () => {
        unwatch?.();
        line({ idle: true });
        controller.close();
      };
      if (idleNow) return finish();
      unwatch = bus.watch(thread, {
        onMessage: (m) => {
          if (!seen.has(m.id)) line(m);
        },
        onIdle: finish,
      });
    },
    cancel() {
      unwatch?.();
    },
  });
  return new Response(stream, { headers: { 'content-type': 'application/x-ndjson' } });
}

export async function startHttpServer(bus: BusApi, options: HttpServerOptions): Promise<RunningServer> {
  const app = createApp(bus, options);
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, hostname: options.host, port: options.port }, () => resolve(s));
    s.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      }),
  };
}
