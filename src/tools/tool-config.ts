/**
 * Checks each listener's grants and tool_config against the registry when the runtime is built, so
 * a typo in organism.yaml fails the start with `listeners[i].tool_config.<tool>.<key>` instead of
 * silently loosening a policy.
 */
import { distance } from 'fastest-levenshtein';
import type { TrustLevel } from '../config/types.ts';
import { ConfigError, type ConfigIssue } from '../errors.ts';
import type { JsonSchema } from '../xml/json-schema.ts';
import {
  APPROVAL_MODES,
  APPROVAL_ROLES,
  type ApprovalSettings,
  defaultApprovalSettings,
} from './approval/types.ts';
import type { RateLimit } from './limits.ts';
import type { ToolRegistry } from './registry.ts';
import { compileSchema, describeError } from './schema.ts';
import type { ToolConfig } from './types.ts';

/** What the dispatcher needs of one listener's entry in organism.yaml. */
export interface ListenerGrants {
  name: string;
  tools: readonly string[];
  tool_config?: Readonly<Record<string, ToolConfig>>;
  trust?: TrustLevel;
}

/** A listener's settings for one granted tool, defaults applied. */
export interface ResolvedToolConfig {
  config: ToolConfig;
  timeoutMs: number;
  maxResultBytes: number;
  rateLimit: RateLimit | undefined;
  /** Whether a person approves calls first (README "Approval"). */
  approval: ApprovalSettings;
}

export interface ResolvedListener {
  name: string;
  trust: TrustLevel;
  tools: Map<string, ResolvedToolConfig>;
}

/** The keys every tool takes, whatever its own config schema says. */
export const COMMON_TOOL_CONFIG: Record<string, JsonSchema> = {
  rate_limit: {
    type: 'object',
    properties: {
      per_minute: { type: 'number', exclusiveMinimum: 0 },
      burst: { type: 'integer', minimum: 1 },
    },
    required: ['per_minute'],
    additionalProperties: false,
  },
  timeout_ms: { type: 'integer', minimum: 1, maximum: 3_600_000 },
  max_result_bytes: { type: 'integer', minimum: 256 },
  approval: { enum: [...APPROVAL_MODES] },
  approval_timeout_ms: { type: 'integer', minimum: 1, maximum: 86_400_000 },
  approval_role: { enum: [...APPROVAL_ROLES] },
  approval_max_pending: { type: 'integer', minimum: 1, maximum: 10_000 },
  approval_elicitation: { type: 'boolean' },
};

export function didYouMean(word: string, candidates: readonly string[]): string {
  let best: string | undefined;
  let bestScore = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const score = distance(word, candidate);
    if (score < bestScore) {
      best = candidate;
      bestScore = score;
    }
  }
  return best !== undefined && bestScore <= Math.max(2, Math.floor(word.length / 3))
    ? ` (did you mean ${best}?)`
    : '';
}

/** The schema a tool's tool_config is checked against: its own keys and the common ones. */
export function configSchema(own: JsonSchema | undefined): JsonSchema {
  const properties = {
    ...((own?.properties as Record<string, JsonSchema> | undefined) ?? {}),
    ...COMMON_TOOL_CONFIG,
  };
  return {
    ...(own ?? {}),
    type: 'object',
    properties,
    additionalProperties: own?.additionalProperties ?? false,
  };
}

export interface ResolveDefaults {
  timeoutMs: number;
  approval?: ApprovalSettings;
  maxResultBytes: number;
  trust: TrustLevel;
}

/** Validates every grant and tool_config; throws one ConfigError listing every problem. */
export function resolveListeners(
  listeners: readonly ListenerGrants[],
  registry: ToolRegistry,
  defaults: ResolveDefaults,
  file: string,
): Map<string, ResolvedListener> {
  const issues: ConfigIssue[] = [];
  const out = new Map<string, ResolvedListener>();
  const known = registry.names();
  const validators = new Map<string, ReturnType<typeof compileSchema>>();
  const approvalDefaults = defaults.approval ?? defaultApprovalSettings();
  listeners.forEach((listener, i) => {
    const resolved: ResolvedListener = {
      name: listener.name,
      trust: listener.trust ?? defaults.trust,
      tools: new Map(),
    };
    const granted = new Set<string>();
    (listener.tools ?? []).forEach((tool, j) => {
      if (!registry.has(tool)) {
        issues.push({
          file,
          path: `listeners[${i}].tools[${j}]`,
          message: `unknown tool "${tool}"${didYouMean(tool, known)}; known tools: ${known.join(', ') || '(none)'}`,
        });
        return;
      }
      granted.add(tool);
    });
    const toolConfig = listener.tool_config ?? {};
    for (const tool of Object.keys(toolConfig)) {
      if (!granted.has(tool)) {
        issues.push({
          file,
          path: `listeners[${i}].tool_config.${tool}`,
          message: registry.has(tool)
            ? `configures ${tool}, which is not granted: add it to listeners[${i}].tools or remove this entry`
            : `unknown tool "${tool}"${didYouMean(tool, known)}`,
        });
      }
    }
    for (const tool of granted) {
      const registered = registry.get(tool);
      if (!registered) continue;
      let validate = validators.get(tool);
      if (!validate) {
        validate = compileSchema(configSchema(registered.definition.config));
        validators.set(tool, validate);
      }
      // Validate a copy: defaults get filled in, and the loaded config stays as the user wrote it.
      const config = structuredClone(toolConfig[tool] ?? {}) as ToolConfig;
      if (!validate(config)) {
        const base = `listeners[${i}].tool_config.${tool}`;
        const allowed = Object.keys((configSchema(registered.definition.config).properties as object) ?? {});
        for (const error of validate.errors ?? []) {
          const { path, message } = describeError(error, config);
          const hint =
            error.keyword === 'additionalProperties' && error.instancePath === ''
              ? `${didYouMean(path, allowed)}; ${tool} takes: ${allowed.join(', ')}`
              : '';
          issues.push({ file, path: path ? `${base}.${path}` : base, message: `${message}${hint}` });
        }
        continue;
      }
      resolved.tools.set(tool, {
        config,
        timeoutMs: config.timeout_ms ?? registered.definition.timeoutMs ?? defaults.timeoutMs,
        maxResultBytes: config.max_result_bytes ?? defaults.maxResultBytes,
        rateLimit: config.rate_limit,
        approval: {
          mode: (config.approval as ApprovalSettings['mode'] | undefined) ?? approvalDefaults.mode,
          timeoutMs: (config.approval_timeout_ms as number | undefined) ?? approvalDefaults.timeoutMs,
          role: (config.approval_role as ApprovalSettings['role'] | undefined) ?? approvalDefaults.role,
          maxPending: (config.approval_max_pending as number | undefined) ?? approvalDefaults.maxPending,
          elicit: (config.approval_elicitation as boolean | undefined) ?? approvalDefaults.elicit,
        },
      });
    }
    out.set(listener.name, resolved);
  });
  if (issues.length > 0) throw new ConfigError(issues);
  return out;
}
