/**
 * What a session keeps between its requests: the log level the client set (logging/setLevel) and
 * the resources it subscribed to (resources/subscribe, unsubscribe). Registered on each session's
 * Server; a request without a session (the stateless POST) may set a level for itself only and
 * cannot subscribe: nothing would be there to tell.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  ErrorCode,
  McpError as SdkMcpError,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { SessionView } from './channel.ts';
import type { LoggingLevel } from './client-channel.ts';
import { type McpHost, threadIdOf } from './host.ts';
import { MAX_SUBSCRIBED_URI_CHARS, MAX_SUBSCRIPTIONS_PER_SESSION } from './subscriptions.ts';

/** Until the client sets one: what a person following a call wants, without every tool call. */
export const DEFAULT_LOG_LEVEL: LoggingLevel = 'info';

export interface SessionState extends SessionView {
  /** The Mcp-Session-Id; undefined for a stateless request. */
  readonly id: string | undefined;
}

export function newSessionState(id: string | undefined): SessionState {
  return { id, level: DEFAULT_LOG_LEVEL };
}

export function registerSessionHandlers(server: Server, host: McpHost, session: SessionState): void {
  // Replaces the SDK's own setLevel handler: the level lives with the session, where the calls'
  // channels (channel.ts) read it.
  server.setRequestHandler(SetLevelRequestSchema, async (request) => {
    session.level = request.params.level;
    return {};
  });
  server.setRequestHandler(SubscribeRequestSchema, async (request) => {
    const { uri } = request.params;
    const id = session.id;
    if (id === undefined)
      throw new SdkMcpError(
        ErrorCode.InvalidRequest,
        'resources/subscribe needs a session: initialize first and send its Mcp-Session-Id',
      );
    if (uri.length > MAX_SUBSCRIBED_URI_CHARS)
      throw new SdkMcpError(
        ErrorCode.InvalidParams,
        `resources/subscribe: the URI is ${uri.length} characters; a URI to watch is at most ${MAX_SUBSCRIBED_URI_CHARS}`,
      );
    const thread = threadIdOf(uri);
    if (uri.startsWith('organism://threads/') && (thread === undefined || !host.thread(uri)))
      throw new SdkMcpError(ErrorCode.InvalidParams, `no resource ${uri}: no such thread`);
    const added = host.subscriptions.subscribe(id, uri, (changed) => {
      void server.sendResourceUpdated({ uri: changed }).catch(() => {});
    });
    if (!added)
      throw new SdkMcpError(
        ErrorCode.InvalidRequest,
        `this session already watches ${MAX_SUBSCRIPTIONS_PER_SESSION} resources, the most it may; unsubscribe from one first`,
      );
    return {};
  });
  server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
    if (session.id !== undefined) host.subscriptions.unsubscribe(session.id, request.params.uri);
    return {};
  });
}
