/** The shared LLM client: unavailable backends, failover and round-robin, rate limits, aborts, keys. */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LlmBackends } from '../../src/agent/backends.ts';
import { LlmClient } from '../../src/agent/client.ts';
import { createScriptedProvider } from '../../src/agent/providers/scripted.ts';
import { estimateTokens, TokenBucket } from '../../src/agent/rate-limit.ts';
import type { AgentLogger } from '../../src/agent/types.ts';
import { LlmError } from '../../src/errors.ts';
import { type FakeLlm, recordingOptions, startFakeLlm } from './helpers.ts';
import { REQUEST } from './providers.contract.ts';

function collectingLogger(): AgentLogger & { lines: string[] } {
  const lines: string[] = [];
  const log = (level: string) => (obj: object, msg: string) => {
    lines.push(`${level} ${msg} ${JSON.stringify(obj)}`);
  };
  return { lines, info: log('info'), warn: log('warn'), debug: log('debug') };
}

const signal = () => new AbortController().signal;
const said = (text: string, usage = { input: 90, output: 10 }) =>
  createScriptedProvider({ script: { name: text, scripts: [{ repeat: true, turns: [{ text, usage }] }] } });

let servers: FakeLlm[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

describe('backends from organism.yaml', () => {
  it('skips a backend whose api_key_env is unset, naming the variable, and uses the next', () => {
    const logger = collectingLogger();
    const llm = LlmClient.fromConfig(
      {
        strategy: 'failover',
        retries: 1,
        backends: [{ provider: 'anthropic', api_key_env: 'NO_SUCH_KEY_FOR_TEST' }, { provider: 'scripted' }],
      },
      { env: {}, logger },
    );
    expect(llm.backends).toEqual(['scripted/builtin']);
    expect(llm.status()).toEqual([
      { label: 'anthropic', available: false, reason: 'NO_SUCH_KEY_FOR_TEST is not set' },
      { label: 'scripted/builtin', available: true },
    ]);
    expect(logger.lines[0]).toContain(
      'LLM backend 0 (anthropic) skipped as unavailable: NO_SUCH_KEY_FOR_TEST is not set',
    );
    expect(logger.lines.at(-1)).toContain(
      'agents use scripted/builtin (the scripted stand-in, not a real model)',
    );
  });

  it('falls back to the built-in scripted provider, with a warning, when nothing is available', async () => {
    const logger = collectingLogger();
    const llm = LlmClient.fromConfig(
      {
        strategy: 'failover',
        retries: 0,
        backends: [{ provider: 'openai', api_key_env: 'NO_SUCH_KEY_FOR_TEST' }],
      },
      { env: {}, logger },
    );
    expect(llm.backends).toEqual(['scripted/builtin']);
    expect(logger.lines.some((l) => l.startsWith('warn no configured LLM backend is available'))).toBe(true);
    const { turn } = await llm.complete(REQUEST, signal());
    expect(turn.text).toContain('scripted stand-in for a language model');
  });

  it('never logs the key, even when the server echoes it back', async () => {
    const key = 'sk-live-0123456789abcdefghij';
    const server = await startFakeLlm(() => ({
      status: 500,
      json: { error: { message: `bad key ${key}` } },
    }));
    servers.push(server);
    const logger = collectingLogger();
    const llm = LlmClient.fromConfig(
      {
        strategy: 'failover',
        retries: 1,
        backends: [
          { provider: 'openai', api_key_env: 'TEST_OPENAI_KEY', base_url: `${server.url}/v1`, model: 'm' },
          { provider: 'scripted' },
        ],
      },
      { env: { TEST_OPENAI_KEY: key }, logger, options: recordingOptions() },
    );
    const { backend } = await llm.complete(REQUEST, signal());
    expect(backend).toBe('scripted/builtin');
    expect(server.requests).toHaveLength(2);
    expect(logger.lines.join('\n')).toContain('server error (HTTP 500): bad key [redacted]');
    expect(logger.lines.join('\n')).not.toContain(key);
  });

  it('reports a script file that cannot be read or is malformed, saying where', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'organism-agent-'));
    const bad = join(dir, 'bad.yaml');
    await writeFile(bad, 'scripts:\n  - turns:\n      - text: hi\n      - tool_calls: [{ args: {} }]\n');
    const make = (script: string) => () =>
      LlmClient.fromConfig({
        strategy: 'failover',
        retries: 0,
        backends: [{ provider: 'scripted', script }],
      });
    expect(make(join(dir, 'missing.yaml'))).toThrow(/cannot read the script .*missing\.yaml/);
    expect(make(bad)).toThrow(`${bad}: scripts[0].turns[1].tool_calls[0].name: expected the function name`);
  });
});

describe('failover and round-robin', () => {
  it('round-robin starts each call at the next backend', async () => {
    const llm = new LlmClient([{ provider: said('a') }, { provider: said('b') }], {
      strategy: 'round-robin',
      retries: 0,
    });
    const texts: string[] = [];
    for (let i = 0; i < 4; i++) texts.push((await llm.complete(REQUEST, signal())).turn.text);
    expect(texts).toEqual(['a', 'b', 'a', 'b']);
  });

  it('moves on at once when retry-after is longer than it is willing to wait', async () => {
    const server = await startFakeLlm(() => ({ status: 429, headers: { 'retry-after': '3600' } }));
    servers.push(server);
    const options = recordingOptions();
    const llm = LlmClient.fromConfig(
      {
        strategy: 'failover',
        retries: 3,
        backends: [
          { provider: 'openai-compatible', base_url: server.url, model: 'm' },
          { provider: 'scripted' },
        ],
      },
      { env: {}, options },
    );
    const { backend } = await llm.complete(REQUEST, signal());
    expect(backend).toBe('scripted/builtin');
    expect(server.requests).toHaveLength(1);
    expect(options.delays).toEqual([]);
  });

  it('gives up on an aborted call without trying the other backends', async () => {
    const server = await startFakeLlm(() => ({ status: 500 }));
    servers.push(server);
    const controller = new AbortController();
    controller.abort(new Error('shutting down'));
    const llm = LlmClient.fromConfig(
      {
        strategy: 'failover',
        retries: 2,
        backends: [
          { provider: 'openai-compatible', base_url: server.url, model: 'm' },
          { provider: 'scripted' },
        ],
      },
      { env: {}, options: recordingOptions() },
    );
    const error = await llm.complete(REQUEST, controller.signal).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmError);
    expect((error as LlmError).code).toBe('llm.aborted');
    expect(server.requests).toHaveLength(0);
  });
});

describe('rate_limit_tpm', () => {
  it('sends a call to the next backend while the first is out of tokens, and waits when none has room', async () => {
    let now = 0;
    const options = { ...recordingOptions(), now: () => now };
    const limited = new LlmClient(
      [{ provider: said('limited'), limiter: new TokenBucket(100, () => now) }, { provider: said('spare') }],
      { strategy: 'failover', retries: 0 },
      options,
    );
    expect((await limited.complete(REQUEST, signal())).turn.text).toBe('limited'); // uses 100 of 100
    expect((await limited.complete(REQUEST, signal())).turn.text).toBe('spare');
    now += 60_000; // a minute refills the bucket
    expect((await limited.complete(REQUEST, signal())).turn.text).toBe('limited');
    expect(options.delays).toEqual([]);

    const bucket = new TokenBucket(100, () => now);
    const alone = new LlmClient(
      [{ provider: said('alone'), limiter: bucket }],
      { strategy: 'failover', retries: 0 },
      options,
    );
    await alone.complete(REQUEST, signal());
    await alone.complete(REQUEST, signal());
    const estimate = estimateTokens(
      REQUEST.system + JSON.stringify(REQUEST.messages) + JSON.stringify(REQUEST.functions),
    );
    // Empty after 100 tokens: the wait is the time to refill the estimate at 100 tokens a minute.
    expect(options.delays).toEqual([Math.ceil((estimate * 60_000) / 100)]);
  });

  it('holds across agents that ask the backend for models of their own', async () => {
    const turn = (text: string) => ({
      scripts: [{ repeat: true, turns: [{ text, usage: { input: 90, output: 10 } }] }],
    });
    const backends = new LlmBackends(
      {
        strategy: 'failover',
        retries: 0,
        backends: [
          { name: 'limited', provider: 'scripted', script: 'limited', rate_limit_tpm: 100 },
          { name: 'spare', provider: 'scripted', script: 'spare' },
        ],
      },
      {
        options: { ...recordingOptions(), now: () => 0 },
        scripts: { limited: turn('limited'), spare: turn('spare') },
      },
    );
    const first = LlmClient.forAgent(backends, { name: 'first', llm: { model: 'first-model' } });
    const second = LlmClient.forAgent(backends, { name: 'second', llm: { model: 'second-model' } });
    expect(await first.complete(REQUEST, signal())).toMatchObject({
      turn: { text: 'limited' },
      backend: 'scripted/first-model',
    }); // uses 100 of 100
    // The other agent's model, the same backend's budget: it is spent, so the call goes on.
    expect((await second.complete(REQUEST, signal())).turn.text).toBe('spare');
  });
});
