/**
 * /mcp: the organism for MCP clients (Streamable HTTP with sessions, src/mcp/server). Any valid
 * token lists tools and reads threads; tools/call needs operator (403 otherwise). The SDK is loaded at
 * the first request here, never before.
 */
import { readJsonBody } from '../body.ts';
import { httpError } from '../errors.ts';
import { type ApiApp, type ApiContext, allow, fail, type RouteDeps } from './common.ts';

type McpHttp = typeof import('../../mcp/server/http.ts');

export function mcpRoutes(app: ApiApp, { service, maxBodyBytes }: RouteDeps): void {
  // Both once per daemon: an import() per request costs a module-map lookup and a microtask hop,
  // and service.info() reads process.memoryUsage() only for the version, which never changes.
  let http: Promise<McpHttp> | undefined;
  let version: string | undefined;
  const handle = async (
    c: ApiContext,
    body: unknown,
    principal: Parameters<McpHttp['handleMcpRequest']>[2],
    host: Parameters<McpHttp['handleMcpRequest']>[3],
  ) => {
    http ??= import('../../mcp/server/http.ts');
    version ??= service.info().version;
    const outgoing = c.env?.outgoing;
    const ended = outgoing ? (done: () => void) => void outgoing.once('close', done) : undefined;
    return (await http).handleMcpRequest(c.req.raw, body, principal, host, version, ended);
  };
  app.post('/mcp', async (c) => {
    const principal = allow(c, 'viewer', 'using the organism over MCP');
    const host = await service.mcp?.();
    if (!host) return fail(c, httpError(404, 'request.not_found', 'this organism does not serve MCP'));
    const body = await readJsonBody(c, maxBodyBytes);
    if ('status' in body) return fail(c, body);
    return handle(c, body.value, principal, host);
  });
  // A session's stream (GET, or a resume with Last-Event-ID) and its end (DELETE): the session's
  // own credential only (src/mcp/server/sessions.ts).
  app.on(['GET', 'DELETE'], '/mcp', async (c) => {
    const principal = allow(c, 'viewer', 'using the organism over MCP');
    const host = await service.mcp?.();
    if (!host) return fail(c, httpError(404, 'request.not_found', 'this organism does not serve MCP'));
    return handle(c, undefined, principal, host);
  });
}
