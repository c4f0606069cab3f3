/**
 * `provider: mcp-sampling`: the turn is answered by the model of the MCP client whose tools/call
 * started the thread, through `sampling/createMessage` on that client (src/mcp/server/
 * client-channel.ts), so the organism holds no API key for it. The request is what every provider
 * gets (the agent's system prompt, the conversation, max tokens, temperature) plus the configured
 * `model` as a model hint. Tools go as sampling tools only when the client declared
 * `sampling.tools`; otherwise the turn is plain text: calls and results of earlier turns are
 * written into the conversation as text, and the model is told it can call nothing now, so its
 * answer is the agent's answer.
 *
 * MCP gives no token counts for a sampled message: the usage is estimated as the rate limits
 * estimate (characters / 4) from what was sent and what came back.
 */
import { LlmError, OrganismError } from '../../errors.ts';
import type {
  ClientChannel,
  ClientChannels,
  CreateMessageRequestParams,
  CreateMessageResult,
  CreateMessageResultWithTools,
} from '../../mcp/server/client-channel.ts';
import { estimateTokens } from '../rate-limit.ts';
import type { ChatMessage, CompletionRequest, CompletionTurn, Provider, ToolCallRequest } from '../types.ts';

export const MCP_SAMPLING = 'mcp-sampling';

export interface McpSamplingOptions {
  /** The daemon's channels by thread; without them (no daemon, no MCP server) no turn can be answered. */
  channels: ClientChannels | undefined;
  /** Sent as the client's model hint; the client chooses. */
  model?: string;
  /** How long one turn may wait for the client (its user may be asked to allow the request). */
  timeoutMs: number;
}

type Params = CreateMessageRequestParams;
type SamplingMessage = Params['messages'][number];
type Block = Exclude<SamplingMessage['content'], readonly unknown[] | unknown[]>;

/** Told to the model, after the agent's own prompt, when its tools cannot be offered this way. */
export const NO_TOOLS_NOTE =
  'This turn is answered through an MCP client that offers no tools to its model: no function can be called now. Reply with your answer as plain text.';

export function createMcpSamplingProvider(options: McpSamplingOptions): Provider {
  const model = options.model ?? 'client';
  const label = `${MCP_SAMPLING}/${model}`;
  return {
    kind: MCP_SAMPLING,
    model,
    label,
    async complete(request: CompletionRequest, signal: AbortSignal): Promise<CompletionTurn> {
      if (signal.aborted) throw new LlmError('llm.aborted', `${label}: the request was aborted`);
      const channel = channelOf(options.channels, request.thread, label);
      const withTools = channel.offers.samplingTools && request.functions.length > 0;
      const params = toParams(request, withTools, options.model);
      const timeout = AbortSignal.timeout(options.timeoutMs);
      let result: CreateMessageResult | CreateMessageResultWithTools;
      try {
        result = await channel.createMessage(params, AbortSignal.any([signal, timeout]));
      } catch (error) {
        if (signal.aborted) throw new LlmError('llm.aborted', `${label}: the request was aborted`);
        const said = error instanceof Error ? error.message : String(error);
        const code = error instanceof OrganismError ? error.code : undefined;
        if (timeout.aborted || code === 'mcp.client_timeout')
          throw new LlmError(
            'llm.timeout',
            `${label}: the MCP client ${clientName(channel)} did not answer sampling/createMessage in time (${said.slice(0, 300)})`,
          );
        // The call that started the thread has returned, or its client went away meanwhile.
        if (code === 'mcp.client_gone' || code === 'mcp.client_lacks')
          throw new LlmError('llm.no_client', `${label}: no MCP client to ask: ${said.slice(0, 300)}`);
        // A person who declined the request, or a client that failed: asking again would ask them again.
        throw new LlmError(
          'llm.client_refused',
          `${label}: the MCP client ${clientName(channel)} did not answer sampling/createMessage: ${said.slice(0, 300)}`,
        );
      }
      return fromResult(result, withTools, params, label);
    },
  };
}

/** The channel of the call that started the thread, or a named error saying why there is none. */
function channelOf(channels: ClientChannels | undefined, thread: string | undefined, label: string) {
  const channel = thread === undefined ? undefined : channels?.forThread(thread);
  if (!channel)
    throw new LlmError(
      'llm.no_client',
      `${label}: no MCP client to ask: thread ${thread ?? '(unknown)'} was not started by an MCP client's tools/call on this daemon, or that call has returned`,
    );
  if (!channel.offers.sampling)
    throw new LlmError(
      'llm.no_client',
      `${label}: the MCP client ${clientName(channel)} that started thread ${thread} does not offer sampling`,
    );
  return channel;
}

/** The client's own name for itself (its text, so quoted and cut). */
function clientName(channel: ClientChannel): string {
  return JSON.stringify(channel.client.name.slice(0, 64));
}

function toParams(request: CompletionRequest, withTools: boolean, model: string | undefined): Params {
  const system =
    request.functions.length > 0 && !withTools ? `${request.system}\n\n${NO_TOOLS_NOTE}` : request.system;
  return {
    systemPrompt: system,
    messages: withTools ? toolMessages(request.messages) : textMessages(request.messages),
    maxTokens: request.maxTokens,
    // Only what this organism sends: nothing of the client's other servers.
    includeContext: 'none',
    ...(request.options?.temperature === undefined ? {} : { temperature: request.options.temperature }),
    ...(model === undefined ? {} : { modelPreferences: { hints: [{ name: model }] } }),
    ...(withTools
      ? {
          tools: request.functions.map((f) => ({
            name: f.name,
            description: f.description,
            inputSchema: { ...f.parameters, type: 'object' as const },
          })),
          toolChoice: { mode: 'auto' as const },
        }
      : {}),
  };
}

const text = (t: string): Block => ({ type: 'text', text: t });

/** Calls as tool_use blocks, each answered in the next user message by a tool_result with its id. */
function toolMessages(messages: readonly ChatMessage[]): SamplingMessage[] {
  return messages.map((m): SamplingMessage => {
    if (m.role === 'user') return { role: 'user', content: text(m.content) };
    if (m.role === 'assistant') {
      const blocks: Block[] = m.text === '' ? [] : [text(m.text)];
      for (const call of m.toolCalls)
        blocks.push({ type: 'tool_use', id: call.id, name: call.name, input: call.args ?? {} });
      return { role: 'assistant', content: blocks.length > 0 ? blocks : [text('(no reply)')] };
    }
    return {
      role: 'user',
      content: m.results.map(
        (r): Block => ({
          type: 'tool_result',
          toolUseId: r.callId,
          content: [{ type: 'text', text: r.content }],
          ...(r.isError ? { isError: true } : {}),
        }),
      ),
    };
  });
}

/** The same conversation as text only (a client without sampling.tools takes no tool blocks). */
function textMessages(messages: readonly ChatMessage[]): SamplingMessage[] {
  return messages.map((m): SamplingMessage => {
    if (m.role === 'user') return { role: 'user', content: text(m.content) };
    if (m.role === 'assistant') {
      const calls = m.toolCalls.map((c) => `[called ${c.name} with ${JSON.stringify(c.args ?? {})}]`);
      return {
        role: 'assistant',
        content: text([m.text, ...calls].filter((t) => t !== '').join('\n') || '(no reply)'),
      };
    }
    // Each result is framed already (frame.ts): data, never instructions.
    return { role: 'user', content: text(m.results.map((r) => r.content).join('\n\n')) };
  });
}

function fromResult(
  result: CreateMessageResult | CreateMessageResultWithTools,
  withTools: boolean,
  sent: Params,
  label: string,
): CompletionTurn {
  if (result.role !== 'assistant')
    throw new LlmError('llm.bad_response', `${label}: the client answered with a ${result.role} message`);
  const blocks = (Array.isArray(result.content) ? result.content : [result.content]) as Array<{
    type: string;
    [key: string]: unknown;
  }>;
  let answer = '';
  const toolCalls: ToolCallRequest[] = [];
  for (const block of blocks) {
    if (block.type === 'text' && typeof block.text === 'string') answer += block.text;
    else if (block.type === 'tool_use' && withTools) {
      const input = block.input;
      const call = {
        id: typeof block.id === 'string' && block.id !== '' ? block.id : `sampling_${toolCalls.length}`,
        name: typeof block.name === 'string' ? block.name : '',
      };
      toolCalls.push(
        input && typeof input === 'object' && !Array.isArray(input)
          ? { ...call, args: input as Record<string, unknown> }
          : { ...call, args: undefined, argsError: 'the tool input is not a JSON object' },
      );
    }
  }
  // An image or audio answer, or tool_use where no tool was offered, is nothing an agent can use.
  if (answer === '' && toolCalls.length === 0 && blocks.some((b) => b.type !== 'text'))
    throw new LlmError(
      'llm.bad_response',
      `${label}: the client's model answered with ${[...new Set(blocks.map((b) => b.type))].join(', ')} content, no text`,
    );
  return {
    text: answer,
    toolCalls,
    usage: {
      input: estimateTokens(
        (sent.systemPrompt ?? '') + JSON.stringify(sent.messages) + JSON.stringify(sent.tools ?? []),
      ),
      output: estimateTokens(answer + (toolCalls.length > 0 ? JSON.stringify(toolCalls) : '')),
    },
    stopReason: typeof result.stopReason === 'string' ? result.stopReason : 'endTurn',
  };
}
