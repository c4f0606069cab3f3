/**
 * POST /mcp: the organism over Streamable HTTP, stateless (a Server and a transport per request,
 * JSON answers), behind the API's bearer tokens: the auth middleware has already answered 401;
 * a tools/call from a token below operator is answered 403 here, before anything runs. Loaded
 * (with the SDK) at the first request to /mcp.
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { hasRole, type Principal } from '../../server/auth.ts';
import type { McpHost } from './host.ts';
import { createMcpServer } from './server.ts';

function jsonError(status: number, code: string, message: string): Response {
  return new Response(JSON.stringify({ error: { code, message } }), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}

/** `body` is the request's JSON, already read under the API's body limit. */
export async function handleMcpRequest(
  request: Request,
  body: unknown,
  principal: Principal,
  host: McpHost,
  version: string,
): Promise<Response> {
  const messages = Array.isArray(body) ? body : [body];
  const calls = messages.some(
    (m) => typeof m === 'object' && m !== null && (m as { method?: unknown }).method === 'tools/call',
  );
  if (calls && !hasRole(principal, 'operator')) {
    return jsonError(
      403,
      'auth.forbidden',
      `calling a tool over MCP needs the operator role; token '${principal.name}' is ${principal.role}`,
    );
  }
  const server = createMcpServer(host, principal, version);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  try {
    return await transport.handleRequest(request, { parsedBody: body });
  } finally {
    // JSON mode: the answer is complete once handleRequest returns.
    void server.close();
  }
}
