/**
 * /mcp: the organism over Streamable HTTP, behind the API's bearer tokens (the auth middleware has
 * already answered 401). An initialize opens a session (sessions.ts: SSE answers, notifications,
 * resumable streams, GET and DELETE); a request that names a session goes to it. A POST with no
 * session and no initialize is answered as before sessions existed: a Server and a transport for
 * that request alone, JSON back (curl, scripts). A tools/call from a token below operator is
 * answered 403 here, before anything runs. Loaded (with the SDK) at the first request to /mcp.
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { hasRole, type Principal } from '../../server/auth.ts';
import type { McpHost } from './host.ts';
import { createMcpServer } from './server.ts';
import { type AnswerEnded, McpSessions, rpcError } from './sessions.ts';

/** One session table per host (per daemon); made at the first request. */
const tables = new WeakMap<McpHost, McpSessions>();

export function sessionsOf(host: McpHost, version: string): McpSessions {
  let sessions = tables.get(host);
  if (!sessions) {
    sessions = new McpSessions(host, version);
    tables.set(host, sessions);
  }
  return sessions;
}

function jsonError(status: number, code: string, message: string): Response {
  return new Response(JSON.stringify({ error: { code, message } }), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}

function hasMethod(messages: unknown[], method: string): boolean {
  return messages.some(
    (m) => typeof m === 'object' && m !== null && (m as { method?: unknown }).method === method,
  );
}

/**
 * `body` is a POST's JSON, already read under the API's body limit; undefined for GET and DELETE.
 * `ended`: the Node server's word that an answer is over (AnswerEnded), so that a session's open
 * stream keeps it from being ended as idle; without one (the app called with no Node server
 * under it) a session counts as idle once its answer is handed over.
 */
export async function handleMcpRequest(
  request: Request,
  body: unknown,
  principal: Principal,
  host: McpHost,
  version: string,
  ended?: AnswerEnded,
): Promise<Response> {
  const messages = body === undefined ? [] : Array.isArray(body) ? body : [body];
  if (hasMethod(messages, 'tools/call') && !hasRole(principal, 'operator')) {
    return jsonError(
      403,
      'auth.forbidden',
      `calling a tool over MCP needs the operator role; token '${principal.name}' is ${principal.role}`,
    );
  }
  const sessions = sessionsOf(host, version);
  const id = request.headers.get('mcp-session-id');
  if (id !== null) return sessions.handle(request, body, principal, id, ended);
  if (request.method === 'POST' && hasMethod(messages, 'initialize'))
    return sessions.open(request, body, principal);
  if (request.method !== 'POST') {
    return rpcError(400, {
      code: 'mcp.session_required',
      message: `${request.method} /mcp needs the Mcp-Session-Id header of a session: POST an initialize first`,
    });
  }
  return stateless(request, body, principal, host, version);
}

async function stateless(
  request: Request,
  body: unknown,
  principal: Principal,
  host: McpHost,
  version: string,
): Promise<Response> {
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
