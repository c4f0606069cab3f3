/**
 * Tracing, optional: with no `telemetry:` section in organism.yaml nothing of OpenTelemetry is
 * imported (the daemon's memory and the bus's speed are as without it); with one, the SDK is loaded
 * here, by a dynamic import, and the daemon hands the Tracing it returns to the bus.
 */
import { randomUUID } from 'node:crypto';
import { knownSecrets } from '../audit/redact.ts';
import { otlpHeaders, type TelemetrySection } from './options.ts';
import type { Telemetry, TelemetryHooks } from './otel.ts';

export { type TelemetrySection, tracesUrl } from './options.ts';
export type { SpanCounts, Telemetry, TelemetryHooks } from './otel.ts';
export { formatTraceparent, parseTraceparent, threadTraceId } from './traceparent.ts';
export type {
  AgentSpan,
  ChatSpan,
  HopMessage,
  HopOutcome,
  HopSpan,
  ToolCallOutcome,
  ToolSpan,
  TraceScope,
  Tracing,
} from './types.ts';
export { setTraceScope, TRACE_SCOPE, traceScopeOf } from './types.ts';

export interface StartTelemetryOptions {
  env: NodeJS.ProcessEnv;
  version?: string;
  /** service.instance.id; default a fresh UUID (one per daemon start). */
  instanceId?: string;
  hooks?: TelemetryHooks;
}

/** The daemon's tracing, or undefined (and nothing loaded) when the section is absent. */
export async function startTelemetry(
  section: TelemetrySection | undefined,
  options: StartTelemetryOptions,
): Promise<Telemetry | undefined> {
  if (section === undefined) return undefined;
  // The headers usually hold a collector's token: every redaction point knows them before use.
  const headers = otlpHeaders(section.otlp.headers_env, options.env);
  knownSecrets.set(
    'telemetry:headers',
    Object.values(headers).flatMap((value) => [value, value.slice(value.lastIndexOf(' ') + 1)]),
  );
  const { createTelemetry } = await import('./otel.ts');
  return createTelemetry(section, {
    env: options.env,
    instanceId: options.instanceId ?? randomUUID(),
    ...(options.version ? { version: options.version } : {}),
    ...(options.hooks ? { hooks: options.hooks } : {}),
  });
}
