/**
 * The contracts providers pass. modelContract: what every Provider promises whatever carries its
 * turns (the HTTP providers and the scripted one run it). providerContract: what an HTTP provider
 * adds, each against a local server answering in that provider's documented wire format; a Wire
 * says how the format looks, the cases are the same. It runs modelContract too.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LlmBackends } from '../../src/agent/backends.ts';
import { LlmClient } from '../../src/agent/client.ts';
import { createBackend } from '../../src/agent/providers/index.ts';
import type { CompletionRequest, Provider } from '../../src/agent/types.ts';
import type { LlmBackendConfig } from '../../src/config/types.ts';
import { LlmError } from '../../src/errors.ts';
import {
  type FakeLlm,
  type FakeReply,
  type RecordedRequest,
  recordingOptions,
  startFakeLlm,
} from './helpers.ts';

export interface WireCall {
  id?: string;
  name: string;
  args: Record<string, unknown>;
}

export interface Wire {
  name: string;
  /** Path the provider must post to, given the server's base URL as configured by `backend`. */
  path: string;
  /** organism.yaml backend for a server at `url`, its key in env var `keyEnv`. */
  backend(url: string, keyEnv: string): LlmBackendConfig;
  /** Checks the auth headers carry `key` (and whatever else the API requires). */
  checkHeaders(request: RecordedRequest, key: string): void;
  textReply(text: string, usage: { input: number; output: number }): unknown;
  callsReply(calls: WireCall[]): unknown;
  /** Read from a request body. */
  model(body: any): string;
  system(body: any): string;
  tools(body: any): Array<{ name: string; description: string; parameters: unknown }>;
  /** The calls of the last assistant turn as sent back. */
  sentCalls(body: any): WireCall[];
  /** The answers to them as sent back, in order. */
  sentResults(body: any): Array<{ id?: string; name?: string; content: string }>;
  /** Whether the wire carries call ids (Ollama's does not). */
  ids: boolean;
  /** The sampling settings as sent, read from the wire's own names for them. */
  sampling(body: any): { temperature: unknown; top_p: unknown; max_tokens: unknown };
  /** Whether max_tokens goes with every request (the API requires one), or only when set. */
  maxTokensAlways: boolean;
}

export const KEY = 'sk-test-4f1d9c0e7b2a4c3d';
const KEY_ENV = 'ORGANISM_TEST_LLM_KEY';

export const REQUEST: CompletionRequest = {
  system: 'You are a test agent.',
  messages: [{ role: 'user', content: '<task from="api">\nAdd.\n</task>' }],
  functions: [
    {
      name: 'calculate',
      description: 'Evaluates arithmetic.',
      parameters: {
        type: 'object',
        properties: { expression: { type: 'string' } },
        required: ['expression'],
      },
    },
  ],
  maxTokens: 256,
  // mcp-sampling asks the thread's MCP client; every other provider sends nothing of it.
  thread: 'contract-thread',
};

/** A conversation whose last assistant turn made two calls, both answered (one failed). */
export const ANSWERED: CompletionRequest = {
  ...REQUEST,
  messages: [
    REQUEST.messages[0]!,
    {
      role: 'assistant',
      text: 'Working.',
      toolCalls: [
        { id: 'call_a', name: 'calculate', args: { expression: '1 + 1' } },
        { id: 'call_b', name: 'calculate', args: { expression: '1 / 0' } },
      ],
    },
    {
      role: 'tool',
      results: [
        { callId: 'call_a', name: 'calculate', content: 'RESULT A', isError: false },
        { callId: 'call_b', name: 'calculate', content: 'RESULT B', isError: true },
      ],
    },
  ],
};

/** Makes a provider of one kind answer as a case needs, however that provider gets its turns. */
export interface ModelHarness {
  /** Provider.kind the providers made here have. */
  kind: string;
  /** A provider whose next answer is `text` with this usage. */
  answering(text: string, usage: { input: number; output: number }): Promise<Provider>;
  /** A provider whose next answer calls these tools (ids are the provider's to give). */
  calling(calls: WireCall[]): Promise<Provider>;
  /** Releases what the providers made since the last call needed (servers). */
  release?(): Promise<void>;
  /** Its wire gives no token counts (MCP sampling): usage is the provider's estimate, not `usage`. */
  estimatesUsage?: boolean;
}

export function modelContract(name: string, harness: ModelHarness): void {
  describe(`${name} model contract`, () => {
    afterEach(async () => {
      await harness.release?.();
    });
    const signal = () => new AbortController().signal;

    it('answers text with its usage, under a label made of its kind and model', async () => {
      const provider = await harness.answering('Two.', { input: 31, output: 7 });
      expect(provider.kind).toBe(harness.kind);
      expect(provider.label).toBe(`${provider.kind}/${provider.model}`);
      const turn = await provider.complete(REQUEST, signal());
      expect(turn).toMatchObject({ text: 'Two.', toolCalls: [] });
      if (harness.estimatesUsage) {
        expect(turn.usage.input).toBeGreaterThan(0);
        expect(turn.usage.output).toBeGreaterThan(0);
      } else expect(turn.usage).toEqual({ input: 31, output: 7 });
      expect(turn.stopReason).toMatch(/\S/);
    });

    it('answers tool calls with their names and arguments, each under an id of its own', async () => {
      const provider = await harness.calling([
        { id: 'id_1', name: 'calculate', args: { expression: '2 * 3' } },
        { id: 'id_2', name: 'calculate', args: { expression: '4 - 1' } },
      ]);
      const turn = await provider.complete(REQUEST, signal());
      expect(turn.toolCalls.map((c) => [c.name, c.args])).toEqual([
        ['calculate', { expression: '2 * 3' }],
        ['calculate', { expression: '4 - 1' }],
      ]);
      const ids = turn.toolCalls.map((c) => c.id);
      expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
      expect(new Set(ids).size).toBe(2);
    });

    it('takes a conversation whose calls were answered, one of them failed, and answers it', async () => {
      const provider = await harness.answering('Done.', { input: 5, output: 1 });
      const turn = await provider.complete(ANSWERED, signal());
      expect(typeof turn.text).toBe('string');
      expect(Array.isArray(turn.toolCalls)).toBe(true);
    });

    it('refuses a request already aborted with llm.aborted', async () => {
      const provider = await harness.answering('never', { input: 1, output: 1 });
      const controller = new AbortController();
      controller.abort();
      const error = await provider.complete(REQUEST, controller.signal).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LlmError);
      expect((error as LlmError).code).toBe('llm.aborted');
    });
  });
}

export function providerContract(wire: Wire): void {
  let modelServers: FakeLlm[] = [];
  const serving = async (reply: unknown) => {
    const server = await startFakeLlm(() => ({ json: reply }));
    modelServers.push(server);
    return directProvider(wire, server.url);
  };
  modelContract(wire.name, {
    kind: wire.backend('http://127.0.0.1:1', KEY_ENV).provider,
    answering: (text, usage) => serving(wire.textReply(text, usage)),
    calling: (calls) => serving(wire.callsReply(calls)),
    release: async () => {
      await Promise.all(modelServers.map((s) => s.close()));
      modelServers = [];
    },
  });

  describe(`${wire.name} provider contract`, () => {
    let servers: FakeLlm[] = [];
    afterEach(async () => {
      await Promise.all(servers.map((s) => s.close()));
      servers = [];
    });
    const serve = async (answer: (r: RecordedRequest, i: number) => FakeReply) => {
      const server = await startFakeLlm(answer);
      servers.push(server);
      return server;
    };
    const client = (urls: string[], retries = 2, strategy: 'failover' | 'round-robin' = 'failover') => {
      const options = recordingOptions();
      const llm = LlmClient.fromConfig(
        { strategy, retries, backends: urls.map((u) => wire.backend(u, KEY_ENV)) },
        { env: { [KEY_ENV]: KEY }, options },
      );
      return { llm, delays: options.delays };
    };
    const signal = () => new AbortController().signal;

    it('posts the prompt, the tool schemas and the key; reads text and usage', async () => {
      const server = await serve(() => ({ json: wire.textReply('Two.', { input: 31, output: 7 }) }));
      const { llm } = client([server.url]);
      const { turn, backend } = await llm.complete(REQUEST, signal());
      expect(turn).toMatchObject({ text: 'Two.', toolCalls: [], usage: { input: 31, output: 7 } });
      expect(backend).toBe(llm.backends[0]);
      const [request] = server.requests;
      expect(request!.method).toBe('POST');
      expect(request!.path).toBe(wire.path);
      expect(request!.headers['content-type']).toBe('application/json');
      wire.checkHeaders(request!, KEY);
      expect(wire.model(request!.body)).toBe('test-model');
      expect(wire.system(request!.body)).toBe('You are a test agent.');
      expect(wire.tools(request!.body)).toEqual([
        {
          name: 'calculate',
          description: 'Evaluates arithmetic.',
          parameters: REQUEST.functions[0]!.parameters,
        },
      ]);
      expect(JSON.stringify(request!.body)).toContain('Add.');
    });

    it('reads tool calls, and sends results back under the ids of the calls', async () => {
      const server = await serve(() => ({
        json: wire.callsReply([
          { id: 'id_1', name: 'calculate', args: { expression: '2 * 3' } },
          { id: 'id_2', name: 'calculate', args: { expression: '4 - 1' } },
        ]),
      }));
      const { llm } = client([server.url]);
      const { turn } = await llm.complete(REQUEST, signal());
      expect(turn.toolCalls.map((c) => [c.name, c.args])).toEqual([
        ['calculate', { expression: '2 * 3' }],
        ['calculate', { expression: '4 - 1' }],
      ]);
      const ids = turn.toolCalls.map((c) => c.id);
      expect(new Set(ids).size).toBe(2);
      if (wire.ids) expect(ids).toEqual(['id_1', 'id_2']);

      await llm.complete(ANSWERED, signal());
      const body = server.requests[1]!.body;
      const calls = wire.sentCalls(body);
      expect(calls.map((c) => [c.name, c.args])).toEqual([
        ['calculate', { expression: '1 + 1' }],
        ['calculate', { expression: '1 / 0' }],
      ]);
      const results = wire.sentResults(body);
      expect(results.map((r) => r.content)).toEqual(['RESULT A', 'RESULT B']);
      if (wire.ids) {
        expect(calls.map((c) => c.id)).toEqual(['call_a', 'call_b']);
        expect(results.map((r) => r.id)).toEqual(['call_a', 'call_b']);
      } else {
        expect(results.map((r) => r.name)).toEqual(['calculate', 'calculate']);
      }
    });

    it('waits out a 429 for as long as retry-after says, then retries', async () => {
      const server = await serve((_, i) =>
        i === 0
          ? { status: 429, headers: { 'retry-after': '7' }, json: { error: { message: 'slow down' } } }
          : { json: wire.textReply('after the wait', { input: 1, output: 1 }) },
      );
      const { llm, delays } = client([server.url]);
      const { turn } = await llm.complete(REQUEST, signal());
      expect(turn.text).toBe('after the wait');
      expect(delays).toEqual([7000]);
      expect(server.requests).toHaveLength(2);
    });

    it('retries a 500 and a dropped connection with backoff, then succeeds', async () => {
      const server = await serve((_, i) =>
        i === 0
          ? { status: 500, json: { error: { message: 'internal' } } }
          : i === 1
            ? { hangUp: true }
            : { json: wire.textReply('third time', { input: 1, output: 1 }) },
      );
      const { llm, delays } = client([server.url]);
      const { turn } = await llm.complete(REQUEST, signal());
      expect(turn.text).toBe('third time');
      // Backoff 500 ms then 1000 ms ceilings, jitter fixed at the middle by the test's random().
      expect(delays).toEqual([375, 750]);
    });

    it('fails over to the second backend when the first keeps failing', async () => {
      const down = await serve(() => ({ status: 503, json: { error: { message: 'overloaded' } } }));
      const up = await serve(() => ({ json: wire.textReply('from the second', { input: 2, output: 3 }) }));
      const { llm } = client([down.url, up.url], 1);
      const { turn, backend } = await llm.complete(REQUEST, signal());
      expect(turn.text).toBe('from the second');
      expect(backend).toBe(llm.backends[1]);
      expect(down.requests).toHaveLength(2); // the first try and one retry
      expect(up.requests).toHaveLength(1);
    });

    it('does not retry a refusal, and never shows the key the server echoed', async () => {
      const server = await serve(() => ({
        status: 401,
        json: { error: { message: `invalid key ${KEY} for this account` } },
      }));
      const { llm, delays } = client([server.url]);
      const error = await llm.complete(REQUEST, signal()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LlmError);
      expect((error as LlmError).code).toBe('llm.all_failed');
      expect((error as LlmError).message).toContain('HTTP 401');
      expect((error as LlmError).message).toContain('invalid key [redacted] for this account');
      expect(JSON.stringify(error) + String((error as Error).stack)).not.toContain(KEY);
      expect(server.requests).toHaveLength(1);
      expect(delays).toEqual([]);
    });

    it("sends an agent's own model and sampling settings, over the organism-wide ones key by key", async () => {
      const server = await serve(() => ({ json: wire.textReply('ok', { input: 1, output: 1 }) }));
      const backends = new LlmBackends(
        {
          strategy: 'failover',
          retries: 0,
          temperature: 0.7,
          top_p: 0.3,
          max_tokens: 999,
          backends: [{ ...wire.backend(server.url, KEY_ENV), name: 'remote' }],
        },
        { env: { [KEY_ENV]: KEY }, options: recordingOptions() },
      );
      const own = LlmClient.forAgent(backends, {
        name: 'triage',
        llm: { backend: 'remote', model: 'agent-model', temperature: 0.2, max_tokens: 77 },
      });
      const wide = LlmClient.forAgent(backends);
      expect((await own.complete(REQUEST, signal())).backend).toBe(
        `${wire.backend('', '').provider}/agent-model`,
      );
      await wide.complete(REQUEST, signal());
      const [first, second] = server.requests;
      expect(wire.model(first!.body)).toBe('agent-model');
      expect(wire.sampling(first!.body)).toEqual({ temperature: 0.2, top_p: 0.3, max_tokens: 77 });
      expect(wire.model(second!.body)).toBe('test-model');
      expect(wire.sampling(second!.body)).toEqual({ temperature: 0.7, top_p: 0.3, max_tokens: 999 });
    });

    it('sends no sampling setting that organism.yaml does not set', async () => {
      const server = await serve(() => ({ json: wire.textReply('ok', { input: 1, output: 1 }) }));
      await client([server.url]).llm.complete(REQUEST, signal());
      expect(wire.sampling(server.requests[0]!.body)).toEqual({
        temperature: undefined,
        top_p: undefined,
        max_tokens: wire.maxTokensAlways ? REQUEST.maxTokens : undefined,
      });
    });

    it('reports an answer that is not the wire format as a bad response', async () => {
      const server = await serve(() => ({ text: 'not json at all' }));
      const provider = directProvider(wire, server.url);
      await expect(provider.complete(REQUEST, signal())).rejects.toMatchObject({ code: 'llm.bad_response' });
    });
  });
}

/** The provider alone (no client, so no retries): one attempt. */
export function directProvider(wire: Wire, url: string): Provider {
  const made = createBackend(wire.backend(url, KEY_ENV), { env: { [KEY_ENV]: KEY }, timeoutMs: 5_000 });
  if (!('provider' in made)) throw new Error(`backend unavailable: ${made.unavailable}`);
  return made.provider;
}
