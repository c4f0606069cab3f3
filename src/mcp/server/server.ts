/**
 * The organism as an MCP server (SDK low-level Server): tools/list and resources for every
 * authenticated caller, tools/call for the operator role and up. One Server per request (the
 * HTTP endpoint is stateless), so the caller's role is fixed for everything it handles.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  McpError as SdkMcpError,
} from '@modelcontextprotocol/sdk/types.js';
import { redactKnown } from '../../audit/redact.ts';
import type { Principal } from '../../server/auth.ts';
import { hasRole } from '../../server/auth.ts';
import type { McpHost } from './host.ts';

export function createMcpServer(host: McpHost, principal: Principal, version: string): Server {
  const server = new Server(
    { name: 'organism', version },
    {
      capabilities: { tools: {}, resources: {} },
      instructions:
        'Tools are this organism\'s listeners (each call starts a thread and returns its reply) and the tools its "mcp" identity is granted. Threads are resources organism://threads/<id>.',
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: host.offered().map((t) => ({
      name: t.name,
      ...(t.title ? { title: t.title } : {}),
      description: t.description,
      inputSchema: t.inputSchema as { type: 'object' },
      annotations: t.annotations,
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    // The HTTP endpoint answers a viewer's call with 403 before it gets here; stdio relays that.
    if (!hasRole(principal, 'operator'))
      throw new SdkMcpError(
        ErrorCode.InvalidRequest,
        `calling a tool needs the operator role; '${principal.name}' is ${principal.role}`,
      );
    const outcome = await host.call(
      request.params.name,
      (request.params.arguments ?? {}) as Record<string, unknown>,
      extra.signal,
    );
    // What leaves for the client carries no secret the daemon knows (invariant 7), as the thread
    // history's copy of a tool result and `organism tools call` do not.
    return {
      content: [{ type: 'text' as const, text: redactKnown(outcome.text) }],
      structuredContent: redactKnown(outcome.structured),
      isError: outcome.isError,
    };
  });
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: host.threads() }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [
      {
        uriTemplate: 'organism://threads/{id}',
        name: 'thread',
        description: 'One thread: its status and every message recorded in it, as JSON.',
        mimeType: 'application/json',
      },
    ],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const text = host.thread(request.params.uri);
    if (text === undefined)
      throw new SdkMcpError(ErrorCode.InvalidParams, `no resource ${request.params.uri}`);
    return { contents: [{ uri: request.params.uri, mimeType: 'application/json', text: redactKnown(text) }] };
  });
  return server;
}
