/**
 * What the organism answers when a server it uses asks for input (`elicitation/create`). Nobody
 * sits at this client: the tool call is an agent's, and a person is reached through approvals, not
 * through a server's form. So the answer is a fixed policy (`mcp_servers[].elicitation`):
 *
 * - `defaults` (the default): accept with the defaults the server's own schema gives, when every
 *   required field has one (the server already chose those values, nothing is made up); otherwise
 *   decline. Offered as the form capability with `applyDefaults`.
 * - `decline`: the capability is not offered, and a server that asks anyway is declined.
 *
 * A URL-mode request (a page for a person to open) is always declined.
 */
import type { ResolvedServerConfig } from '../config.ts';

type Schema = { properties?: Record<string, { default?: unknown }>; required?: string[] };
type Answer = { action: 'accept'; content: Record<string, unknown> } | { action: 'decline' };

/** The client capabilities to announce for this server's policy. */
export function elicitationCapabilities(
  server: Pick<ResolvedServerConfig, 'elicitation'>,
): Record<string, unknown> {
  return server.elicitation === 'defaults' ? { elicitation: { form: { applyDefaults: true } } } : {};
}

/** The answer to one request's params under the server's policy. */
export function answerElicitation(
  server: Pick<ResolvedServerConfig, 'elicitation'>,
  params: { mode?: string; requestedSchema?: unknown },
): Answer {
  if (server.elicitation !== 'defaults' || (params.mode !== undefined && params.mode !== 'form'))
    return { action: 'decline' };
  const schema = (params.requestedSchema ?? {}) as Schema;
  const content: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    if (property && typeof property === 'object' && 'default' in property) content[name] = property.default;
  }
  const required = Array.isArray(schema.required) ? schema.required : [];
  if (required.some((name) => !(name in content))) return { action: 'decline' };
  return { action: 'accept', content };
}
