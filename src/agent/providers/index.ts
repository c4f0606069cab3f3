/**
 * organism.yaml `llm.backends[i]` -> a Provider, or the reason it cannot be used here. A backend
 * whose api_key_env or base_url_env names an unset variable is unavailable (skipped, and logged
 * without the key), which is how the default organism falls through to the scripted provider.
 */
import type { LlmBackendConfig } from '../../config/types.ts';
import { LlmError } from '../../errors.ts';
import type { ClientChannels } from '../../mcp/server/client-channel.ts';
import type { Provider } from '../types.ts';
import { createAnthropicProvider } from './anthropic.ts';
import { createMcpSamplingProvider } from './mcp-sampling.ts';
import { createOllamaProvider } from './ollama.ts';
import { createOpenAiProvider, OPENAI_DEFAULTS } from './openai.ts';
import { createScriptedProvider, type Script } from './scripted.ts';

export type BackendResult = { provider: Provider } | { unavailable: string };

export interface BackendOptions {
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  /** Script objects by path, for embedders that build scripts in code (tests). */
  scripts?: Record<string, Script>;
  /** The daemon's MCP clients by thread, for mcp-sampling (absent: no thread has one). */
  clientChannels?: ClientChannels;
}

/** Throws LlmError('llm.script') for a script file that cannot be read: that is a config mistake. */
export function createBackend(config: LlmBackendConfig, options: BackendOptions): BackendResult {
  const { env, timeoutMs } = options;
  let apiKey: string | undefined;
  if (config.api_key_env !== undefined) {
    apiKey = env[config.api_key_env];
    if (!apiKey) return { unavailable: `${config.api_key_env} is not set` };
  }
  let baseUrl = config.base_url;
  if (config.base_url_env !== undefined) {
    baseUrl = env[config.base_url_env] || undefined;
    if (!baseUrl) return { unavailable: `${config.base_url_env} is not set` };
    if (!/^https?:\/\//.test(baseUrl)) return { unavailable: `${config.base_url_env} is not an http(s) URL` };
  }
  switch (config.provider) {
    case 'anthropic':
      if (!apiKey) return { unavailable: 'anthropic needs api_key_env' };
      return { provider: createAnthropicProvider({ apiKey, model: config.model, baseUrl, timeoutMs }) };
    case 'openai':
      if (!apiKey) return { unavailable: 'openai needs api_key_env' };
      return {
        provider: createOpenAiProvider({
          kind: 'openai',
          apiKey,
          model: config.model ?? OPENAI_DEFAULTS.model,
          baseUrl,
          timeoutMs,
        }),
      };
    case 'openai-compatible':
      if (!baseUrl) return { unavailable: 'openai-compatible needs base_url' };
      if (!config.model) return { unavailable: 'openai-compatible needs model (the server has no default)' };
      return {
        provider: createOpenAiProvider({
          kind: 'openai-compatible',
          apiKey,
          model: config.model,
          baseUrl,
          timeoutMs,
        }),
      };
    case 'ollama':
      if (!baseUrl) return { unavailable: 'ollama needs base_url' };
      return { provider: createOllamaProvider({ baseUrl, model: config.model, apiKey, timeoutMs }) };
    case 'mcp-sampling':
      return {
        provider: createMcpSamplingProvider({
          channels: options.clientChannels,
          timeoutMs,
          ...(config.model === undefined ? {} : { model: config.model }),
        }),
      };
    case 'scripted': {
      const script =
        config.script === undefined ? undefined : (options.scripts?.[config.script] ?? config.script);
      return {
        provider: createScriptedProvider({
          ...(script === undefined ? {} : { script }),
          ...(config.model === undefined ? {} : { model: config.model }),
        }),
      };
    }
    default:
      throw new LlmError(
        'llm.not_configured',
        `unknown provider ${String((config as { provider: unknown }).provider)}`,
      );
  }
}

export { createAnthropicProvider } from './anthropic.ts';
export { createMcpSamplingProvider, MCP_SAMPLING } from './mcp-sampling.ts';
export { createOllamaProvider } from './ollama.ts';
export { createOpenAiProvider } from './openai.ts';
export {
  BUILTIN_SCRIPT,
  createScriptedProvider,
  type Script,
  type ScriptEntry,
  type ScriptTurn,
} from './scripted.ts';
