/**
 * A listener's handler time limit keeps running while one of its calls waits for a person: with the
 * defaults (30 s against 10 minutes) the handler would time out long before anyone answers. Said at
 * every start, like the tools' own notices.
 */
import type { OrganismConfig } from '../../config/types.ts';
import { defaultApprovalSettings } from './types.ts';

export function approvalTimeoutWarnings(config: Pick<OrganismConfig, 'listeners' | 'limits'>): string[] {
  const out: string[] = [];
  const defaults = defaultApprovalSettings();
  config.listeners.forEach((listener, i) => {
    const handlerMs = listener.timeout_ms ?? config.limits.handler_timeout_ms;
    for (const [tool, settings] of Object.entries(listener.tool_config ?? {})) {
      const mode = settings.approval ?? defaults.mode;
      const waitMs = settings.approval_timeout_ms ?? defaults.timeoutMs;
      if (mode === 'never' || handlerMs > waitMs) continue;
      out.push(
        `listener ${listener.name}: ${tool} may wait ${waitMs} ms for approval, but its handler times out after ${handlerMs} ms; set listeners[${i}].timeout_ms above ${waitMs} (or lower approval_timeout_ms)`,
      );
    }
  });
  return out;
}
