/**
 * The LLM client every agent of an organism shares: the available backends in order, one attempt
 * chain per call (rate limit -> provider -> retries), and failover to the next backend when one
 * gives up. `strategy: round-robin` starts each call at the next backend instead of the first.
 * Shared, so a backend's rate_limit_tpm holds across all agents using it.
 */
import { redactKnown } from '../audit/redact.ts';
import type { LlmSection } from '../config/types.ts';
import { LlmError } from '../errors.ts';
import { defaultLlmClientOptions, type LlmClientOptions } from './options.ts';
import { type BackendResult, createBackend } from './providers/index.ts';
import type { Script } from './providers/scripted.ts';
import { createScriptedProvider } from './providers/scripted.ts';
import { estimateTokens, TokenBucket } from './rate-limit.ts';
import { withRetries } from './retry.ts';
import type { AgentLogger, CompletionRequest, CompletionTurn, Provider } from './types.ts';

export interface LlmBackend {
  provider: Provider;
  /** rate_limit_tpm, when the backend has one. */
  limiter?: TokenBucket;
}

export interface BackendStatus {
  /** `provider/model` for available ones; the provider kind for skipped ones. */
  label: string;
  available: boolean;
  reason?: string;
}

export interface CreateLlmClientOptions {
  env?: NodeJS.ProcessEnv;
  logger?: AgentLogger;
  options?: Partial<LlmClientOptions>;
  /** Script objects by the `script` path named in a scripted backend (tests, embedders). */
  scripts?: Record<string, Script>;
}

export class LlmClient {
  readonly #backends: LlmBackend[];
  readonly #strategy: LlmSection['strategy'];
  readonly #retries: number;
  readonly #options: LlmClientOptions;
  readonly #logger: AgentLogger | undefined;
  readonly #status: BackendStatus[];
  readonly #settings: string;
  #next = 0;

  constructor(
    backends: LlmBackend[],
    settings: Pick<LlmSection, 'strategy' | 'retries'>,
    options: Partial<LlmClientOptions> = {},
    logger?: AgentLogger,
    status?: BackendStatus[],
  ) {
    if (backends.length === 0)
      throw new LlmError('llm.not_configured', 'an LLM client needs at least one backend');
    this.#backends = backends;
    this.#strategy = settings.strategy;
    this.#retries = settings.retries;
    this.#options = { ...defaultLlmClientOptions(), ...options };
    this.#logger = logger;
    this.#status = status ?? backends.map((b) => ({ label: b.provider.label, available: true }));
    // fromConfig passes the whole `llm:` section as `settings`.
    this.#settings = JSON.stringify({ settings, status: this.#status });
  }

  /**
   * What the client was built from, as text: organism.yaml's `llm:` section (from fromConfig) and
   * which backends could be used. A reload compares it to tell agents whose model changed.
   */
  get settings(): string {
    return this.#settings;
  }

  /**
   * From organism.yaml's `llm:` section. Backends that cannot be used here (an unset api_key_env,
   * say) are skipped with a log line naming the variable, never its value. With none left, the
   * built-in scripted provider answers, and a warning says so.
   */
  static fromConfig(section: LlmSection, create: CreateLlmClientOptions = {}): LlmClient {
    const options = { ...defaultLlmClientOptions(), ...create.options };
    const env = create.env ?? process.env;
    const backends: LlmBackend[] = [];
    const status: BackendStatus[] = [];
    for (const [index, config] of section.backends.entries()) {
      const result: BackendResult = createBackend(config, {
        env,
        timeoutMs: options.requestTimeoutMs,
        ...(create.scripts ? { scripts: create.scripts } : {}),
      });
      if ('unavailable' in result) {
        status.push({ label: config.provider, available: false, reason: result.unavailable });
        create.logger?.info(
          { backend: index, provider: config.provider, reason: result.unavailable },
          `LLM backend ${index} (${config.provider}) skipped as unavailable: ${result.unavailable}`,
        );
        continue;
      }
      const backend: LlmBackend = { provider: result.provider };
      if (config.rate_limit_tpm !== undefined)
        backend.limiter = new TokenBucket(config.rate_limit_tpm, options.now);
      backends.push(backend);
      status.push({ label: result.provider.label, available: true });
    }
    if (backends.length === 0) {
      const provider = createScriptedProvider();
      backends.push({ provider });
      status.push({ label: provider.label, available: true, reason: 'no configured backend is available' });
      create.logger?.warn(
        { backend: provider.label },
        section.backends.length === 0
          ? 'no LLM backends configured: agents use the built-in scripted provider (no real model)'
          : 'no configured LLM backend is available: agents use the built-in scripted provider (no real model)',
      );
    }
    create.logger?.info(
      { backends: backends.map((b) => b.provider.label), strategy: section.strategy },
      `agents use ${backends[0]!.provider.label}${backends[0]!.provider.kind === 'scripted' ? ' (the scripted stand-in, not a real model)' : ''}${
        backends.length > 1
          ? ` (${section.strategy} to ${backends
              .slice(1)
              .map((b) => b.provider.label)
              .join(', ')})`
          : ''
      }`,
    );
    return new LlmClient(backends, section, options, create.logger, status);
  }

  /** Every configured backend, available or not, in order. */
  status(): BackendStatus[] {
    return this.#status.map((s) => ({ ...s }));
  }

  /** Labels of the backends calls can go to, in order. */
  get backends(): string[] {
    return this.#backends.map((b) => b.provider.label);
  }

  /** One assistant turn from the first backend that answers. Throws LlmError('llm.all_failed'). */
  async complete(
    request: CompletionRequest,
    signal: AbortSignal,
  ): Promise<{ turn: CompletionTurn; backend: string }> {
    const order = this.#order();
    const estimate = estimateTokens(
      request.system + JSON.stringify(request.messages) + JSON.stringify(request.functions),
    );
    // Backends with room in their token budget go first; a limited one is still tried after them.
    const ready = order.filter((b) => !b.limiter || b.limiter.waitMs(estimate) === 0);
    const limited = order.filter((b) => !ready.includes(b));
    const failures: string[] = [];
    for (const backend of [...ready, ...limited]) {
      const label = backend.provider.label;
      if (backend.limiter) {
        const wait = Math.min(backend.limiter.waitMs(estimate), this.#options.maxRateWaitMs);
        if (wait > 0) {
          this.#logger?.info({ backend: label, wait_ms: wait }, `waiting for ${label}'s rate_limit_tpm`);
          try {
            await this.#options.sleep(wait, signal);
          } catch {
            throw new LlmError('llm.aborted', 'the request was aborted while waiting for a rate limit');
          }
        }
        backend.limiter.take(estimate);
      }
      try {
        const turn = await withRetries(() => backend.provider.complete(request, signal), {
          retries: this.#retries,
          backoffBaseMs: this.#options.backoffBaseMs,
          backoffMaxMs: this.#options.backoffMaxMs,
          maxRetryAfterMs: this.#options.maxRetryAfterMs,
          sleep: this.#options.sleep,
          random: this.#options.random,
          signal,
          onRetry: (error, delay, attempt) =>
            this.#logger?.warn(
              { backend: label, code: error.code, delay_ms: delay, attempt },
              `${error.message}; retry ${attempt} in ${delay} ms`,
            ),
        });
        backend.limiter?.settle(estimate, turn.usage.input + turn.usage.output);
        return { turn: redactTurn(turn), backend: label };
      } catch (error) {
        backend.limiter?.settle(estimate, 0);
        if (signal.aborted || (error instanceof LlmError && error.code === 'llm.aborted')) throw error;
        const message = error instanceof Error ? error.message : String(error);
        failures.push(message);
        this.#logger?.warn({ backend: label, err: message }, `LLM backend ${label} failed`);
      }
    }
    throw new LlmError('llm.all_failed', `no LLM backend answered: ${failures.join('; ')}`, {
      details: { backends: order.map((b) => b.provider.label) },
    });
  }

  #order(): LlmBackend[] {
    if (this.#strategy !== 'round-robin' || this.#backends.length < 2) return this.#backends;
    const start = this.#next++ % this.#backends.length;
    return [...this.#backends.slice(start), ...this.#backends.slice(0, start)];
  }
}

/**
 * A model that repeats a secret the daemon holds (its own API key, say, in any form the registry
 * knows) does not get it into an answer, a tool's arguments, a peer message or the thread.
 */
function redactTurn(turn: CompletionTurn): CompletionTurn {
  const text = redactKnown(turn.text);
  const toolCalls = redactKnown(turn.toolCalls);
  return text === turn.text && toolCalls === turn.toolCalls ? turn : { ...turn, text, toolCalls };
}
