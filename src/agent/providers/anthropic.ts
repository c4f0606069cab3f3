/**
 * Anthropic Messages API: `POST {base}/v1/messages` with `x-api-key` and `anthropic-version`.
 * The system prompt is a top-level field; the model's calls come as `tool_use` content blocks with
 * an id; every one of them is answered in the next user turn by a `tool_result` block with the
 * same `tool_use_id` (all answers of one turn in one user message, as the API requires).
 */
import { LlmError } from '../../errors.ts';
import type { ChatMessage, CompletionTurn, Provider, ToolCallRequest } from '../types.ts';
import { joinUrl, jsonProvider, sampling } from './http.ts';

export const ANTHROPIC_DEFAULTS = {
  baseUrl: 'https://api.anthropic.com',
  model: 'claude-sonnet-4-5',
  version: '2023-06-01',
} as const;

export interface AnthropicOptions {
  apiKey: string;
  model?: string;
  baseUrl?: string;
  timeoutMs: number;
}

type Block =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'tool_result'; tool_use_id: string; content: string; is_error?: boolean };

interface WireMessage {
  role: 'user' | 'assistant';
  content: string | Block[];
}

export function createAnthropicProvider(options: AnthropicOptions): Provider {
  const model = options.model ?? ANTHROPIC_DEFAULTS.model;
  return jsonProvider({
    kind: 'anthropic',
    model,
    url: joinUrl(options.baseUrl ?? ANTHROPIC_DEFAULTS.baseUrl, '/v1/messages'),
    apiKey: options.apiKey,
    headers: { 'x-api-key': options.apiKey, 'anthropic-version': ANTHROPIC_DEFAULTS.version },
    timeoutMs: options.timeoutMs,
    body: (request) => ({
      model,
      max_tokens: request.maxTokens,
      ...sampling(request.options),
      system: request.system,
      messages: toWire(request.messages),
    }),
    tools: (functions) =>
      functions.map((f) => ({ name: f.name, description: f.description, input_schema: f.parameters })),
    parse: fromWire,
  });
}

function toWire(messages: readonly ChatMessage[]): WireMessage[] {
  const out: WireMessage[] = [];
  for (const m of messages) {
    if (m.role === 'user') out.push({ role: 'user', content: m.content });
    else if (m.role === 'assistant') {
      const blocks: Block[] = [];
      if (m.text !== '') blocks.push({ type: 'text', text: m.text });
      for (const call of m.toolCalls)
        blocks.push({ type: 'tool_use', id: call.id, name: call.name, input: call.args ?? {} });
      // The API refuses an empty assistant turn.
      out.push({
        role: 'assistant',
        content: blocks.length > 0 ? blocks : [{ type: 'text', text: '(no reply)' }],
      });
    } else {
      out.push({
        role: 'user',
        content: m.results.map((r) => ({
          type: 'tool_result',
          tool_use_id: r.callId,
          content: r.content,
          ...(r.isError ? { is_error: true } : {}),
        })),
      });
    }
  }
  return out;
}

function fromWire(answer: unknown, label: string): CompletionTurn {
  const a = answer as {
    content?: unknown;
    stop_reason?: unknown;
    usage?: { input_tokens?: unknown; output_tokens?: unknown };
  };
  if (!a || typeof a !== 'object' || !Array.isArray(a.content)) {
    throw new LlmError('llm.bad_response', `${label}: the answer has no content array`, {
      details: { backend: label },
    });
  }
  let text = '';
  const toolCalls: ToolCallRequest[] = [];
  for (const block of a.content as Array<Record<string, unknown>>) {
    if (block?.type === 'text' && typeof block.text === 'string') text += block.text;
    else if (block?.type === 'tool_use') {
      const id = typeof block.id === 'string' ? block.id : `toolu_${toolCalls.length}`;
      const name = typeof block.name === 'string' ? block.name : '';
      const input = block.input;
      if (input && typeof input === 'object' && !Array.isArray(input))
        toolCalls.push({ id, name, args: input as Record<string, unknown> });
      else toolCalls.push({ id, name, args: undefined, argsError: 'the tool input is not a JSON object' });
    }
  }
  return {
    text,
    toolCalls,
    usage: { input: count(a.usage?.input_tokens), output: count(a.usage?.output_tokens) },
    stopReason: typeof a.stop_reason === 'string' ? a.stop_reason : 'unknown',
  };
}

function count(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0;
}
