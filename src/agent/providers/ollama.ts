/**
 * Ollama `POST {base}/api/chat` with `stream: false`. Tool calls come as `message.tool_calls` with
 * `function.arguments` already an object and (in most versions) no call id, and `done_reason` is
 * "stop" even when the model called tools, so the calls themselves decide whether the turn is
 * final. Ids are made up here, and answers go back as `role: tool` messages in call order with the
 * tool's name (`tool_name`), which is how Ollama matches them.
 */
import { LlmError } from '../../errors.ts';
import type { ChatMessage, CompletionTurn, Provider, ToolCallRequest } from '../types.ts';
import { functionTools, joinUrl, jsonProvider, sampling } from './http.ts';
import { parseArguments } from './openai.ts';

export const OLLAMA_DEFAULTS = { model: 'llama3.1' } as const;

export interface OllamaOptions {
  baseUrl: string;
  model?: string;
  /** For an Ollama behind a proxy that wants a bearer token. */
  apiKey?: string;
  timeoutMs: number;
}

type WireMessage =
  | { role: 'system' | 'user'; content: string }
  | {
      role: 'assistant';
      content: string;
      tool_calls?: Array<{ function: { name: string; arguments: object } }>;
    }
  | { role: 'tool'; content: string; tool_name: string };

export function createOllamaProvider(options: OllamaOptions): Provider {
  const model = options.model ?? OLLAMA_DEFAULTS.model;
  let seq = 0;
  return jsonProvider({
    kind: 'ollama',
    model,
    url: joinUrl(options.baseUrl, '/api/chat'),
    ...(options.apiKey ? { apiKey: options.apiKey } : {}),
    headers: options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {},
    timeoutMs: options.timeoutMs,
    body: (request) => ({
      model,
      stream: false,
      messages: [{ role: 'system', content: request.system }, ...toWire(request.messages)],
      // Ollama takes sampling settings under options, by its own names.
      options: { num_predict: request.maxTokens, ...sampling(request.options) },
    }),
    tools: functionTools,
    parse: (answer, label) => fromWire(answer, label, () => `ollama_${++seq}`),
  });
}

function toWire(messages: readonly ChatMessage[]): WireMessage[] {
  const out: WireMessage[] = [];
  for (const m of messages) {
    if (m.role === 'user') out.push({ role: 'user', content: m.content });
    else if (m.role === 'assistant') {
      const message: WireMessage = { role: 'assistant', content: m.text };
      if (m.toolCalls.length > 0)
        message.tool_calls = m.toolCalls.map((c) => ({
          function: { name: c.name, arguments: c.args ?? {} },
        }));
      out.push(message);
    } else {
      for (const r of m.results) out.push({ role: 'tool', content: r.content, tool_name: r.name });
    }
  }
  return out;
}

function fromWire(answer: unknown, label: string, nextId: () => string): CompletionTurn {
  const a = answer as {
    message?: { content?: unknown; tool_calls?: unknown };
    done_reason?: unknown;
    prompt_eval_count?: unknown;
    eval_count?: unknown;
    error?: unknown;
  };
  if (!a?.message || typeof a.message !== 'object') {
    const why = typeof a?.error === 'string' ? `: ${a.error.slice(0, 300)}` : '';
    throw new LlmError('llm.bad_response', `${label}: the answer has no message${why}`, {
      details: { backend: label },
    });
  }
  const toolCalls: ToolCallRequest[] = [];
  const calls = Array.isArray(a.message.tool_calls)
    ? (a.message.tool_calls as Array<Record<string, any>>)
    : [];
  for (const call of calls) {
    const id = typeof call?.id === 'string' && call.id !== '' ? call.id : nextId();
    const name = typeof call?.function?.name === 'string' ? call.function.name : '';
    const { args, argsError } = parseArguments(call?.function?.arguments);
    toolCalls.push(argsError === undefined ? { id, name, args } : { id, name, args, argsError });
  }
  return {
    text: typeof a.message.content === 'string' ? a.message.content : '',
    toolCalls,
    usage: { input: count(a.prompt_eval_count), output: count(a.eval_count) },
    stopReason: typeof a.done_reason === 'string' ? a.done_reason : 'unknown',
  };
}

function count(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0;
}
