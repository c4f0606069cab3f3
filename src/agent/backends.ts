/**
 * The organism's LLM backends, shared by its agents: which ones can be used here (checked once, a
 * skipped one logged once), one rate limit per backend whatever model each agent asks of it (so
 * rate_limit_tpm holds across agents), and the providers agents ask, one per backend and model.
 */
import type { LlmSection } from '../config/types.ts';
import type { ClientChannels } from '../mcp/server/client-channel.ts';
import { defaultLlmClientOptions, type LlmClientOptions } from './options.ts';
import { createBackend } from './providers/index.ts';
import { createScriptedProvider, type Script } from './providers/scripted.ts';
import { TokenBucket } from './rate-limit.ts';
import type { EffectiveLlm } from './settings.ts';
import type { AgentLogger, Provider } from './types.ts';

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
  /** The daemon's MCP clients by thread: what an mcp-sampling backend asks. */
  clientChannels?: ClientChannels;
}

/** What an agent's client is made of. */
export interface ResolvedBackends {
  backends: LlmBackend[];
  status: BackendStatus[];
  /** None of its backends can be used here: the scripted stand-in answers. */
  standIn: boolean;
}

export class LlmBackends {
  readonly section: LlmSection;
  readonly create: CreateLlmClientOptions;
  readonly options: LlmClientOptions;
  /** Why each backend cannot be used here, by index; absent: it can. */
  readonly #unavailable = new Map<number, string>();
  readonly #limiters = new Map<number, TokenBucket>();
  /** Providers by backend and the model and script asked of it: agents asking the same share one. */
  readonly #providers = new Map<string, Provider>();

  /** Throws LlmError('llm.script') for a scripted backend whose script cannot be read. */
  constructor(section: LlmSection, create: CreateLlmClientOptions = {}) {
    this.section = section;
    this.create = create;
    this.options = { ...defaultLlmClientOptions(), ...create.options };
    for (const [index, config] of section.backends.entries()) {
      const result = createBackend(config, this.#backendOptions());
      if ('unavailable' in result) {
        this.#unavailable.set(index, result.unavailable);
        create.logger?.info(
          { backend: index, provider: config.provider, reason: result.unavailable },
          `LLM backend ${index} (${config.provider}) skipped as unavailable: ${result.unavailable}`,
        );
        continue;
      }
      this.#providers.set(JSON.stringify([index, config.model, config.script]), result.provider);
      if (config.rate_limit_tpm !== undefined)
        this.#limiters.set(index, new TokenBucket(config.rate_limit_tpm, this.options.now));
    }
  }

  /** The backends `settings` names, those that can be used here, or the scripted stand-in. */
  resolve(settings: EffectiveLlm): ResolvedBackends {
    const backends: LlmBackend[] = [];
    const status: BackendStatus[] = [];
    for (const { index, config } of settings.backends) {
      const reason = this.#unavailable.get(index);
      if (reason !== undefined) {
        status.push({ label: config.provider, available: false, reason });
        continue;
      }
      const key = JSON.stringify([index, config.model, config.script]);
      let provider = this.#providers.get(key);
      if (!provider) {
        const result = createBackend(config, this.#backendOptions());
        // Available with its own model a moment ago; the environment is the same object.
        if ('unavailable' in result) {
          status.push({ label: config.provider, available: false, reason: result.unavailable });
          continue;
        }
        provider = result.provider;
        this.#providers.set(key, provider);
      }
      const limiter = this.#limiters.get(index);
      backends.push(limiter ? { provider, limiter } : { provider });
      status.push({ label: provider.label, available: true });
    }
    if (backends.length > 0) return { backends, status, standIn: false };
    const provider = createScriptedProvider({
      ...(settings.script === undefined
        ? {}
        : { script: this.create.scripts?.[settings.script] ?? settings.script }),
      ...(settings.model === undefined ? {} : { model: settings.model }),
    });
    backends.push({ provider });
    status.push({ label: provider.label, available: true, reason: 'no configured backend is available' });
    return { backends, status, standIn: true };
  }

  #backendOptions() {
    return {
      env: this.create.env ?? process.env,
      timeoutMs: this.options.requestTimeoutMs,
      ...(this.create.scripts ? { scripts: this.create.scripts } : {}),
      ...(this.create.clientChannels ? { clientChannels: this.create.clientChannels } : {}),
    };
  }
}
