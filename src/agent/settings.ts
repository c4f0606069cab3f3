/**
 * An agent's effective LLM settings: its `listeners[].llm` over the organism-wide `llm:`, key by
 * key. Everything that decides which model is asked and how is in here, so the result, as text,
 * is what a reload compares to tell the agents whose model changed from those whose did not.
 */
import type { AgentLlmConfig, LlmBackendConfig, LlmSection } from '../config/types.ts';
import { LlmError } from '../errors.ts';
import type { CallOptions } from './types.ts';

/** One backend an agent asks, with the agent's model and script in place of the backend's. */
export interface ChosenBackend {
  /** Its place in `llm.backends`: the key of the rate limit it shares with other agents. */
  index: number;
  config: LlmBackendConfig;
}

export interface EffectiveLlm {
  strategy: LlmSection['strategy'];
  retries: number;
  /** In order; empty when `llm.backends` is. */
  backends: ChosenBackend[];
  call: CallOptions;
  /** The agent's own model and script, for the scripted stand-in when no backend can be used. */
  model?: string;
  script?: string;
}

/** What agents call a backend by: its `name`, else its provider. */
export function backendName(config: LlmBackendConfig): string {
  return config.name ?? config.provider;
}

/** The backends a name picks: one, or none (unknown), or several (two left unnamed, same provider). */
export function backendsNamed(section: LlmSection, name: string): number[] {
  return section.backends.flatMap((b, index) => (backendName(b) === name ? [index] : []));
}

/** `agent` over `section`; `agent` undefined or empty is the organism-wide settings as they are. */
export function effectiveLlm(section: LlmSection, agent: AgentLlmConfig = {}): EffectiveLlm {
  let indexes = section.backends.map((_, index) => index);
  if (agent.backend !== undefined) {
    const named = backendsNamed(section, agent.backend);
    // organism validate refuses both; a config built in code can still get here.
    if (named.length !== 1)
      throw new LlmError(
        'llm.not_configured',
        named.length === 0
          ? `no backend in llm.backends is named '${agent.backend}'`
          : `several backends in llm.backends are called '${agent.backend}'; give each a name`,
      );
    indexes = named;
  }
  const backends = indexes.map((index): ChosenBackend => {
    const config: LlmBackendConfig = { ...section.backends[index]! };
    if (agent.model !== undefined) config.model = agent.model;
    if (agent.script !== undefined && config.provider === 'scripted') config.script = agent.script;
    return { index, config };
  });
  const temperature = agent.temperature ?? section.temperature;
  const topP = agent.top_p ?? section.top_p;
  const maxTokens = agent.max_tokens ?? section.max_tokens;
  return {
    strategy: agent.strategy ?? section.strategy,
    retries: agent.retries ?? section.retries,
    backends,
    call: {
      ...(temperature === undefined ? {} : { temperature }),
      ...(topP === undefined ? {} : { topP }),
      ...(maxTokens === undefined ? {} : { maxTokens }),
    },
    ...(agent.model === undefined ? {} : { model: agent.model }),
    ...(agent.script === undefined ? {} : { script: agent.script }),
  };
}
