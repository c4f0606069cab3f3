/**
 * The LLM client an agent asks: its backends in order, one attempt chain per call (rate limit ->
 * provider -> retries), and failover to the next backend when one gives up. `strategy: round-robin`
 * starts each call at the next backend instead of the first. Agents without `llm:` settings of
 * their own share one client; every client of an organism shares its backends' rate limits
 * (LlmBackends), so a backend's rate_limit_tpm holds across all agents using it.
 */
import { redactKnown } from '../audit/redact.ts';
import type { AgentLlmConfig, LlmCallSettings, LlmSection } from '../config/types.ts';
import { LlmError } from '../errors.ts';
import { type BackendStatus, type CreateLlmClientOptions, type LlmBackend, LlmBackends } from './backends.ts';
import { defaultLlmClientOptions, type LlmClientOptions } from './options.ts';
import { estimateTokens } from './rate-limit.ts';
import { withRetries } from './retry.ts';
import { effectiveLlm } from './settings.ts';
import type { AgentLogger, CallOptions, CompletionRequest, CompletionTurn } from './types.ts';

export type { BackendStatus, CreateLlmClientOptions, LlmBackend } from './backends.ts';

/** What a client runs by: the strategy, retries and per-call settings; any other key is only compared. */
export type LlmClientSettings = Pick<LlmSection, 'strategy' | 'retries'> & LlmCallSettings;

export class LlmClient {
  readonly #backends: LlmBackend[];
  readonly #strategy: LlmSection['strategy'];
  readonly #retries: number;
  readonly #call: CallOptions;
  readonly #hasCall: boolean;
  readonly #options: LlmClientOptions;
  readonly #logger: AgentLogger | undefined;
  readonly #status: BackendStatus[];
  readonly #settings: string;
  #next = 0;

  constructor(
    backends: LlmBackend[],
    settings: LlmClientSettings,
    options: Partial<LlmClientOptions> = {},
    logger?: AgentLogger,
    status?: BackendStatus[],
  ) {
    if (backends.length === 0)
      throw new LlmError('llm.not_configured', 'an LLM client needs at least one backend');
    this.#backends = backends;
    this.#strategy = settings.strategy;
    this.#retries = settings.retries;
    this.#call = {
      ...(settings.temperature === undefined ? {} : { temperature: settings.temperature }),
      ...(settings.top_p === undefined ? {} : { topP: settings.top_p }),
      ...(settings.max_tokens === undefined ? {} : { maxTokens: settings.max_tokens }),
    };
    this.#hasCall = Object.keys(this.#call).length > 0;
    this.#options = { ...defaultLlmClientOptions(), ...options };
    this.#logger = logger;
    this.#status = status ?? backends.map((b) => ({ label: b.provider.label, available: true }));
    this.#settings = JSON.stringify({
      settings,
      status: this.#status,
      content: backends.map((b) => b.provider.fingerprint ?? null),
    });
  }

  /**
   * What the client was built from, as text: the agent's effective settings (its backends with
   * their models, strategy, retries, sampling), which backends could be used, and what scripted
   * ones play. A reload compares it to tell the agents whose model or script changed.
   */
  get settings(): string {
    return this.#settings;
  }

  /**
   * From organism.yaml's `llm:` section, for every agent without settings of its own. Backends
   * that cannot be used here (an unset api_key_env, say) are skipped with a log line naming the
   * variable, never its value. With none left, the built-in scripted provider answers, and a
   * warning says so.
   */
  static fromConfig(section: LlmSection, create: CreateLlmClientOptions = {}): LlmClient {
    return LlmClient.forAgent(new LlmBackends(section, create));
  }

  /**
   * The client of an agent with `llm` settings of its own (`listeners[].llm`) over the
   * organism-wide ones, on the organism's shared `backends`; without `agent`, the organism-wide
   * client. Throws LlmError for a backend name `llm.backends` does not have.
   */
  static forAgent(backends: LlmBackends, agent?: { name: string; llm?: AgentLlmConfig }): LlmClient {
    const { section, create } = backends;
    const effective = effectiveLlm(section, agent?.llm);
    const resolved = backends.resolve(effective);
    const who = agent ? `agent ${agent.name}` : 'agents';
    const first = resolved.backends[0]!.provider;
    if (resolved.standIn) {
      create.logger?.warn(
        { ...(agent ? { agent: agent.name } : {}), backend: first.label },
        effective.backends.length === 0
          ? `no LLM backends configured: ${who} use${agent ? 's' : ''} the built-in scripted provider (no real model)`
          : `no configured LLM backend is available: ${who} use${agent ? 's' : ''} the built-in scripted provider (no real model)`,
      );
    }
    const rest = resolved.backends.slice(1).map((b) => b.provider.label);
    create.logger?.info(
      {
        ...(agent ? { agent: agent.name } : {}),
        backends: resolved.backends.map((b) => b.provider.label),
        strategy: effective.strategy,
      },
      `${who} use${agent ? 's' : ''} ${first.label}${first.kind === 'scripted' ? ' (the scripted stand-in, not a real model)' : ''}${
        rest.length > 0 ? ` (${effective.strategy} to ${rest.join(', ')})` : ''
      }`,
    );
    const settings: LlmClientSettings & { backends: unknown; script?: string } = {
      strategy: effective.strategy,
      retries: effective.retries,
      ...(effective.call.temperature === undefined ? {} : { temperature: effective.call.temperature }),
      ...(effective.call.topP === undefined ? {} : { top_p: effective.call.topP }),
      ...(effective.call.maxTokens === undefined ? {} : { max_tokens: effective.call.maxTokens }),
      backends: effective.backends.map((b) => b.config),
      ...(resolved.standIn && effective.script !== undefined ? { script: effective.script } : {}),
    };
    return new LlmClient(resolved.backends, settings, backends.options, create.logger, resolved.status);
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
    const sent = maskSystem(this.#withSettings(request));
    const estimate = estimateTokens(
      sent.system + JSON.stringify(sent.messages) + JSON.stringify(sent.functions),
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
        const turn = await withRetries(() => backend.provider.complete(sent, signal), {
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

  /** The request with this agent's sampling settings; untouched when organism.yaml sets none. */
  #withSettings(request: CompletionRequest): CompletionRequest {
    if (!this.#hasCall) return request;
    return {
      ...request,
      maxTokens: this.#call.maxTokens ?? request.maxTokens,
      options: { ...request.options, ...this.#call },
    };
  }

  #order(): LlmBackend[] {
    if (this.#strategy !== 'round-robin' || this.#backends.length < 2) return this.#backends;
    const start = this.#next++ % this.#backends.length;
    return [...this.#backends.slice(start), ...this.#backends.slice(0, start)];
  }
}

/**
 * The agent's own prompt can hold a secret the daemon knows (organism.yaml's `${ENV}` in `prompt`);
 * the conversation is redacted as it is framed (frame.ts), the system prompt here, whatever the
 * backend: no model gets it (invariant 7), least of all an MCP client's (mcp-sampling).
 */
function maskSystem(request: CompletionRequest): CompletionRequest {
  const system = redactKnown(request.system);
  return system === request.system ? request : { ...request, system };
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
