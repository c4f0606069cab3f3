/**
 * The way back to the MCP client that started a call: what the organism may ask of that client
 * (its model through sampling, its user through elicitation) and tell it (log and progress
 * notifications) while the call runs. The MCP server (src/mcp/server) makes one per call from the
 * client's session; listener calls bind it to the thread they start, so whatever runs in that
 * thread (an agent's turn on the `mcp-sampling` backend, an approval asked by elicitation, an own
 * tool's `ctx.client`) finds it by thread id. Outside an MCP call there is none: callers must
 * treat `undefined` as "no client to ask" and say so plainly.
 *
 * Types only from the SDK, so importing this loads nothing.
 */
import type {
  CreateMessageRequestParams,
  CreateMessageResult,
  CreateMessageResultWithTools,
  ElicitRequestParams,
  ElicitResult,
  LoggingLevel,
} from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../../server/auth.ts';

export type {
  CreateMessageRequestParams,
  CreateMessageResult,
  CreateMessageResultWithTools,
  ElicitRequestParams,
  ElicitResult,
  LoggingLevel,
};

export interface ClientOffers {
  /** The client declared `sampling`: it answers sampling/createMessage with its model. */
  readonly sampling: boolean;
  /** The client declared `sampling.tools`: createMessage may carry `tools` and answer with tool_use. */
  readonly samplingTools: boolean;
  /** The client declared `elicitation` (form mode; url mode when it says so). */
  readonly elicitation: { readonly form: boolean; readonly url: boolean };
}

export interface ClientChannel {
  readonly offers: ClientOffers;
  /** The client's name and version from initialize, for the audit record. */
  readonly client: { readonly name: string; readonly version: string };
  /**
   * The credential the call came with (token name and role): what the client's user may decide
   * for the organism (an approval asked by elicitation needs the role the API would need).
   */
  readonly caller: Principal;
  /**
   * sampling/createMessage on the client. Rejects with a named error when the client does not
   * offer sampling, is gone, or does not answer before `signal` aborts.
   */
  createMessage(
    params: CreateMessageRequestParams,
    signal?: AbortSignal,
  ): Promise<CreateMessageResult | CreateMessageResultWithTools>;
  /** elicitation/create on the client; same failure rules as createMessage. */
  elicit(params: ElicitRequestParams, signal?: AbortSignal): Promise<ElicitResult>;
  /** notifications/message at `level`, sent only if at or above the level the client set. */
  log(level: LoggingLevel, data: unknown, logger?: string): void;
  /** notifications/progress for the call's progressToken; nothing when the call gave none. */
  progress(progress: number, total?: number, message?: string): void;
}

/** Channels by thread: a listener call binds its thread for as long as the call waits. */
export interface ClientChannels {
  /** Binds `thread` to `channel`; the returned function unbinds it (idempotent). */
  bind(thread: string, channel: ClientChannel): () => void;
  forThread(thread: string): ClientChannel | undefined;
}

/** The in-memory map (one per daemon): a thread run by another daemon has no channel here. */
export function createClientChannels(): ClientChannels {
  const byThread = new Map<string, ClientChannel>();
  return {
    bind(thread, channel) {
      byThread.set(thread, channel);
      return () => {
        if (byThread.get(thread) === channel) byThread.delete(thread);
      };
    },
    forThread: (thread) => byThread.get(thread),
  };
}
