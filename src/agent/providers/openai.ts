/**
 * OpenAI Chat Completions: `POST {base}/chat/completions`, where the base includes `/v1` as in
 * OpenAI's own clients. Also serves OpenAI-compatible servers (vLLM, llama.cpp, LM Studio, ...)
 * through base_url. The model's calls are `tool_calls` whose `function.arguments` is a JSON
 * *string* that may not parse: such a call gets a readable error result instead of running.
 * Answers go back as `role: tool` messages carrying the call's `tool_call_id`.
 */
import { LlmError } from '../../errors.ts';
import type { ChatMessage, CompletionTurn, Provider, ToolCallRequest } from '../types.ts';
import { functionTools, joinUrl, jsonProvider, sampling } from './http.ts';

export const OPENAI_DEFAULTS = {
  baseUrl: 'https://api.openai.com/v1',
  model: 'gpt-4o-mini',
} as const;

export interface OpenAiOptions {
  /** `openai` or `openai-compatible` (only the label differs). */
  kind: 'openai' | 'openai-compatible';
  /** Absent for compatible servers that need none. */
  apiKey?: string;
  model: string;
  baseUrl?: string;
  timeoutMs: number;
}

interface WireToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

type WireMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: WireToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export function createOpenAiProvider(options: OpenAiOptions): Provider {
  const { model } = options;
  return jsonProvider({
    kind: options.kind,
    model,
    url: joinUrl(options.baseUrl ?? OPENAI_DEFAULTS.baseUrl, '/chat/completions'),
    ...(options.apiKey ? { apiKey: options.apiKey } : {}),
    headers: options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {},
    timeoutMs: options.timeoutMs,
    body: (request) => ({
      model,
      ...sampling(request.options),
      // OpenAI's own API wants max_completion_tokens (its reasoning models refuse max_tokens);
      // compatible servers know max_tokens. Sent only when organism.yaml sets it, as before.
      ...(request.options?.maxTokens === undefined
        ? {}
        : {
            [options.kind === 'openai' ? 'max_completion_tokens' : 'max_tokens']: request.options.maxTokens,
          }),
      messages: [{ role: 'system', content: request.system }, ...toWire(request.messages)],
    }),
    tools: functionTools,
    parse: fromWire,
  });
}

function toWire(messages: readonly ChatMessage[]): WireMessage[] {
  const out: WireMessage[] = [];
  for (const m of messages) {
    if (m.role === 'user') out.push({ role: 'user', content: m.content });
    else if (m.role === 'assistant') {
      const message: WireMessage = { role: 'assistant', content: m.text === '' ? null : m.text };
      if (m.toolCalls.length > 0) {
        message.tool_calls = m.toolCalls.map((c) => ({
          id: c.id,
          type: 'function',
          // Sent back as the model wrote it, even when it did not parse.
          function: { name: c.name, arguments: c.rawArgs ?? JSON.stringify(c.args ?? {}) },
        }));
      }
      out.push(message);
    } else {
      for (const r of m.results) out.push({ role: 'tool', tool_call_id: r.callId, content: r.content });
    }
  }
  return out;
}

function fromWire(answer: unknown, label: string): CompletionTurn {
  const a = answer as {
    choices?: Array<{ message?: { content?: unknown; tool_calls?: unknown }; finish_reason?: unknown }>;
    usage?: { prompt_tokens?: unknown; completion_tokens?: unknown };
  };
  const choice = Array.isArray(a?.choices) ? a.choices[0] : undefined;
  const message = choice?.message;
  if (!message || typeof message !== 'object') {
    throw new LlmError('llm.bad_response', `${label}: the answer has no choices[0].message`, {
      details: { backend: label },
    });
  }
  const toolCalls: ToolCallRequest[] = [];
  const calls = Array.isArray(message.tool_calls) ? (message.tool_calls as Array<Record<string, any>>) : [];
  for (const [index, call] of calls.entries()) {
    const id = typeof call?.id === 'string' && call.id !== '' ? call.id : `call_${index}`;
    const name = typeof call?.function?.name === 'string' ? call.function.name : '';
    toolCalls.push({ id, name, ...parseArguments(call?.function?.arguments) });
  }
  return {
    text: typeof message.content === 'string' ? message.content : '',
    toolCalls,
    usage: { input: count(a.usage?.prompt_tokens), output: count(a.usage?.completion_tokens) },
    stopReason: typeof choice?.finish_reason === 'string' ? choice.finish_reason : 'unknown',
  };
}

/** `arguments` is a JSON string by the spec; some compatible servers send an object. */
export function parseArguments(raw: unknown): Pick<ToolCallRequest, 'args' | 'argsError' | 'rawArgs'> {
  if (raw && typeof raw === 'object' && !Array.isArray(raw)) return { args: raw as Record<string, unknown> };
  if (raw === undefined || raw === null || raw === '') return { args: {}, rawArgs: '' };
  if (typeof raw !== 'string') return { args: undefined, argsError: 'the arguments are not a JSON object' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    return {
      args: undefined,
      rawArgs: raw,
      argsError: `the arguments are not valid JSON (${(error as Error).message}); send one JSON object`,
    };
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    return { args: undefined, rawArgs: raw, argsError: 'the arguments must be one JSON object' };
  return { args: parsed as Record<string, unknown>, rawArgs: raw };
}

function count(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0;
}
