/**
 * The HTTP + WebSocket API: REST under /api/v1 (one module per resource in ./routes), the live
 * stream at /api/v1/stream, Prometheus text at /metrics, and /healthz. Every request passes the
 * security headers, the cross-site refusal, the body cap and (except /healthz) authentication;
 * each route then checks the role it needs. Bound to 127.0.0.1 by default; any other address
 * without auth tokens is refused at start (assertSafeBind).
 */
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import type { Logger } from 'pino';
import { ServerError } from '../errors.ts';
import { type Authenticator, assertSafeBind } from './auth.ts';
import { dashboardRoutes } from './dashboard/index.ts';
import { httpError } from './errors.ts';
import type { RateLimiter } from './rate-limit.ts';
import { approvalRoutes } from './routes/approvals.ts';
import { auditAndToolRoutes } from './routes/audit-tools.ts';
import { callRoutes } from './routes/call.ts';
import type { ApiEnv, RouteDeps } from './routes/common.ts';
import { fail, failWith } from './routes/common.ts';
import { injectRoutes } from './routes/inject.ts';
import { listenerRoutes } from './routes/listeners.ts';
import { mcpRoutes } from './routes/mcp.ts';
import { openApiRoutes } from './routes/openapi.ts';
import { organismRoutes } from './routes/organism.ts';
import { seriesRoutes } from './routes/series.ts';
import { sessionRoutes } from './routes/session.ts';
import { threadRoutes } from './routes/threads.ts';
import { toolCallRoutes } from './routes/tool-call.ts';
import { bodyLimit, sameOriginOnly, securityHeaders } from './security.ts';
import type { OrganismService } from './service.ts';
import { StreamServer } from './websocket.ts';

export interface HttpServerOptions {
  host: string;
  port: number;
  /** Largest request body accepted, in bytes. */
  maxBodyBytes: number;
  logger: Logger;
  /** The current authenticator and inject limiter: functions, because a reload may replace them. */
  auth: () => Authenticator;
  injectLimiter: () => RateLimiter;
  /** Most WebSocket stream clients at once (default 64). */
  maxStreamClients?: number;
  /** Serve the dashboard's page and files (organism.yaml `server.dashboard`; default true). */
  dashboard?: boolean;
}

export interface RunningServer {
  url: string;
  port: number;
  stream: StreamServer;
  close(): Promise<void>;
}

export function createApp(
  service: OrganismService,
  options: Pick<
    HttpServerOptions,
    'maxBodyBytes' | 'logger' | 'auth' | 'injectLimiter' | 'host' | 'dashboard'
  >,
): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  const deps: RouteDeps = {
    service,
    logger: options.logger,
    maxBodyBytes: options.maxBodyBytes,
    injectLimiter: options.injectLimiter,
  };

  app.use('*', securityHeaders());
  app.use('*', sameOriginOnly(options.host));
  app.use('*', bodyLimit(options.maxBodyBytes));

  // Liveness for process supervisors and load balancers: no token needed, says nothing else.
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  // The dashboard's page and files hold no data: served without a token (it signs in itself).
  if (options.dashboard !== false) dashboardRoutes(app);

  app.use('*', async (c, next) => {
    c.set('principal', options.auth().authenticate(c.req.header('authorization')));
    await next();
  });

  organismRoutes(app, deps);
  listenerRoutes(app, deps);
  threadRoutes(app, deps);
  injectRoutes(app, deps);
  callRoutes(app, deps);
  auditAndToolRoutes(app, deps);
  toolCallRoutes(app, deps);
  approvalRoutes(app, deps);
  mcpRoutes(app, deps);
  sessionRoutes(app, deps);
  seriesRoutes(app);
  openApiRoutes(app, deps, { dashboard: options.dashboard !== false });

  app.notFound((c) =>
    fail(c, httpError(404, 'request.not_found', `no route for ${c.req.method} ${c.req.path}`)),
  );
  app.onError((error, c) => {
    const mapped = failWith(c, error);
    if (mapped.status >= 500) options.logger.error({ err: error, path: c.req.path }, 'request failed');
    return mapped;
  });
  return app;
}

export async function startHttpServer(
  service: OrganismService,
  options: HttpServerOptions,
): Promise<RunningServer> {
  assertSafeBind(options.host, options.auth());
  const app = createApp(service, options);
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    // overrideGlobalObjects: false: by default the adapter puts its own Request and Response on
    // globalThis, after which a response from fetch() is no `instanceof Response` anywhere in the
    // process (the MCP SDK's OAuth client read an authorization server's refusal as
    // "[object Response]" then, test/server/global-response.test.ts).
    const s = serve(
      { fetch: app.fetch, hostname: options.host, port: options.port, overrideGlobalObjects: false },
      () => resolve(s),
    );
    s.once('error', (error) => reject(listenError(error, options.host, options.port)));
  });
  const stream = new StreamServer({
    hub: service.events,
    auth: options.auth,
    listenHost: options.host,
    logger: options.logger,
    organism: () => service.info().name,
    ...(options.maxStreamClients !== undefined ? { maxClients: options.maxStreamClients } : {}),
  });
  server.on('upgrade', (request, socket, head) => stream.handleUpgrade(request, socket, head));
  // Slow-loris bounds: a client gets 30 s to send its headers and 60 s for the whole request.
  const node = server as unknown as { headersTimeout?: number; requestTimeout?: number };
  node.headersTimeout = 30_000;
  node.requestTimeout = 60_000;
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}`,
    port,
    stream,
    close: () =>
      new Promise<void>((resolve) => {
        stream.close();
        server.close(() => resolve());
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      }),
  };
}

/** Why the API cannot listen, in one line that says what to change (not a Node stack). */
function listenError(error: Error, host: string, port: number): Error {
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  const change = 'choose another with --port or server.port';
  switch ((error as NodeJS.ErrnoException).code) {
    case 'EADDRINUSE':
      return new ServerError(
        'server.address_in_use',
        `cannot listen on ${where}: the port is in use (another organism run, or another program); ${change}`,
        { host, port },
      );
    case 'EACCES':
      return new ServerError(
        'server.listen',
        `cannot listen on ${where}: permission denied (ports below 1024 need privileges); ${change}`,
        { host, port },
      );
    case 'EADDRNOTAVAIL':
      return new ServerError(
        'server.listen',
        `cannot listen on ${where}: no such address on this machine; check --host or server.host`,
        { host, port },
      );
    default:
      return error;
  }
}
