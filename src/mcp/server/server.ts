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
import { mcpIdentity } from '../config.ts';
import { CallChannel } from './channel.ts';
import { registerCompletion } from './features/completion.ts';
import { redactBlock } from './features/content.ts';
import { registerPrompts } from './features/prompts.ts';
import { registerResources } from './features/resources.ts';
import type { McpHost } from './host.ts';
import { mcpServeOptions } from './options.ts';
import { newSessionState, registerSessionHandlers, type SessionState } from './session-handlers.ts';

/** `session`: the state this server's session keeps (a stateless request gets one of its own). */
export function createMcpServer(
  host: McpHost,
  principal: Principal,
  version: string,
  session: SessionState = newSessionState(undefined),
): Server {
  const server = new Server(
    { name: 'organism', version },
    {
      capabilities: { tools: {}, resources: { subscribe: true }, logging: {} },
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
    const config = host.deps.config();
    const channel = new CallChannel(server, extra, session, principal, mcpIdentity(config).call_timeout_ms);
    // SSE polling (SEP-1699): a call that runs long lets its stream go; the client comes back
    // with Last-Event-ID and gets the rest. Only where the transport can replay (closeSSEStream).
    const closeAfter = mcpServeOptions(config).stream_close_ms;
    const closer =
      closeAfter > 0 && extra.closeSSEStream ? setTimeout(extra.closeSSEStream, closeAfter) : undefined;
    let outcome: Awaited<ReturnType<McpHost['call']>>;
    try {
      outcome = await host.call(
        request.params.name,
        (request.params.arguments ?? {}) as Record<string, unknown>,
        extra.signal,
        channel,
      );
    } finally {
      clearTimeout(closer);
      channel.close();
    }
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
  const deps = { host, changed: host.subscriptions.changed };
  registerResources(server, deps);
  registerPrompts(server, deps);
  registerCompletion(server, deps);
  registerSessionHandlers(server, host, session);
  return server;
}
