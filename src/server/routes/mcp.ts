/**
 * /mcp: the organism for MCP clients (Streamable HTTP with sessions, src/mcp/server). Any valid
 * token lists tools and reads threads; tools/call needs operator (403 otherwise). The SDK is loaded at
 * the first request here, never before.
 */
import { readJsonBody } from '../body.ts';
import { httpError } from '../errors.ts';
import { type ApiApp, allow, fail, type RouteDeps } from './common.ts';

export function mcpRoutes(app: ApiApp, { service, maxBodyBytes }: RouteDeps): void {
  app.post('/mcp', async (c) => {
    const principal = allow(c, 'viewer', 'using the organism over MCP');
    const host = await service.mcp?.();
    if (!host) return fail(c, httpError(404, 'request.not_found', 'this organism does not serve MCP'));
    const body = await readJsonBody(c, maxBodyBytes);
    if ('status' in body) return fail(c, body);
    const { handleMcpRequest } = await import('../../mcp/server/http.ts');
    return handleMcpRequest(c.req.raw, body.value, principal, host, service.info().version);
  });
  // A session's stream (GET, or a resume with Last-Event-ID) and its end (DELETE): the session's
  // own credential only (src/mcp/server/sessions.ts).
  app.on(['GET', 'DELETE'], '/mcp', async (c) => {
    const principal = allow(c, 'viewer', 'using the organism over MCP');
    const host = await service.mcp?.();
    if (!host) return fail(c, httpError(404, 'request.not_found', 'this organism does not serve MCP'));
    const { handleMcpRequest } = await import('../../mcp/server/http.ts');
    return handleMcpRequest(c.req.raw, undefined, principal, host, service.info().version);
  });
}
