/**
 * The organism as an MCP server (SDK low-level Server): tools/list and resources for every
 * authenticated caller, tools/call for the operator role and up. One Server per request (the
 * HTTP endpoint is stateless), so the caller's role is fixed for everything it handles.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError as SdkMcpError,
} from '@modelcontextprotocol/sdk/types.js';
import { redactKnown } from '../../audit/redact.ts';
import type { Principal } from '../../server/auth.ts';
import { hasRole } from '../../server/auth.ts';
import { registerCompletion } from './features/completion.ts';
import { redactBlock } from './features/content.ts';
import { registerPrompts } from './features/prompts.ts';
import { registerResources } from './features/resources.ts';
import type { McpHost } from './host.ts';

export function createMcpServer(host: McpHost, principal: Principal, version: string): Server {
  const server = new Server(
    { name: 'organism', version },
    {
      capabilities: { tools: {}, resources: {} },
      instructions:
        'Tools are this organism\'s listeners (each call starts a thread and returns its reply) and the tools its "mcp" identity is granted. Threads are resources organism://threads/<id>; agents offered as tools are prompts too.',
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
      content: outcome.content
        ? outcome.content.map(redactBlock)
        : [{ type: 'text' as const, text: redactKnown(outcome.text) }],
      ...(outcome.structured ? { structuredContent: redactKnown(outcome.structured) } : {}),
      isError: outcome.isError,
    };
  });
  // Prompts, resources (the project's and the threads) and completion: src/mcp/server/features.
  const deps = { host };
  registerResources(server, deps);
  registerPrompts(server, deps);
  registerCompletion(server, deps);
  return server;
}
