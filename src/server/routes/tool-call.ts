/**
 * POST /tools/:tool/call {as, args?, scope?}: one tool call through the daemon's own dispatcher, as
 * the listener `as` (its grants, tool_config, trust, guards, rate limits, approval, audit), exactly
 * as that listener's own call would run. What `organism tools call` sends when a daemon answers for
 * the config, so the CLI and the running organism always agree.
 *
 * Who may call as whom. The caller picks the arguments, which a listener's own code otherwise does:
 * acting as a listener is more than sending it a message (operator), so it needs the admin role
 * (the local token is admin: the CLI on the daemon's machine, which could run the call itself).
 * An operator may call as the `mcp` identity only, the identity organism.yaml grants to API
 * clients (what /mcp's tools/call already lets an operator do). A viewer calls nothing. No token
 * names any other listener, and runtime names (api, system, approvals...) are no listener.
 *
 * The answer is 200 with the ToolResult whatever the tool did (a refusal is a normal result):
 * {thread, listener, tool, result}. A call that needs approval waits for a person's decision before
 * it answers, as any call does.
 */
import { redactKnown } from '../../audit/redact.ts';
import { MCP_IDENTITY } from '../../mcp/config.ts';
import { didYouMean } from '../../tools/tool-config.ts';
import { CAPABILITIES, type Capability } from '../../tools/types.ts';
import { requireRole } from '../auth.ts';
import { readJsonBody } from '../body.ts';
import { httpError } from '../errors.ts';
import { type ApiApp, fail, failWith, type RouteDeps } from './common.ts';

/** A tool name as the registry has them: native, user, or <server>.<tool> of an MCP server. */
const TOOL_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

export function toolCallRoutes(app: ApiApp, { service, logger, maxBodyBytes }: RouteDeps): void {
  app.post('/api/v1/tools/:tool/call', async (c) => {
    const principal = c.get('principal');
    requireRole(principal, 'operator', 'calling a tool');
    const tool = c.req.param('tool');
    if (!TOOL_NAME.test(tool))
      return fail(c, httpError(400, 'request.invalid', 'the tool name in the path is not a tool name'));
    const body = await readJsonBody(c, maxBodyBytes);
    if ('status' in body) return fail(c, body);
    const ask = parseAsk(body.value);
    if (typeof ask === 'string') return fail(c, httpError(400, 'request.invalid', ask));
    const callers = service.toolCallers();
    const caller = callers.find((one) => one.name === ask.as);
    if (!caller) {
      const names = callers.map((one) => one.name);
      return fail(
        c,
        httpError(
          404,
          'listener.not_found',
          `no listener named '${ask.as}'${didYouMean(ask.as, names)}; tools can be called as ${names.join(', ') || '(none)'}`,
        ),
      );
    }
    // An operator may act as the identity organism.yaml gives API clients, never as a listener
    // (one named mcp included, where there is no mcp: section); see the module's comment.
    if (!caller.mcpIdentity)
      requireRole(
        principal,
        'admin',
        `calling a tool as listener '${ask.as}' (an operator may call as the ${MCP_IDENTITY}: section's identity only)`,
      );
    const busy = service.admission(); // shutting down, or the history behind
    if (busy) return failWith(c, busy);
    const { thread, result } = await service.callTool({ tool, ...ask, by: principal.name });
    logger.info({ tool, as: ask.as, thread, by: principal.name, outcome: result.status }, 'tool called');
    // As in the thread history and the CLI: a result carrying a secret the organism knows shows it masked.
    return c.json({ thread, listener: ask.as, tool, result: redactKnown(result) });
  });
}

interface Ask {
  as: string;
  args: Record<string, unknown>;
  scope?: Capability[];
}

/** The body as a call, or what is wrong with it. */
function parseAsk(value: unknown): Ask | string {
  const shape = 'send a JSON object {"as": listener, "args"?: object, "scope"?: [capability, ...]}';
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return shape;
  const { as, args, scope, ...rest } = value as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length > 0)
    return `unknown field${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}: ${shape}`;
  if (typeof as !== 'string' || as === '') return `"as" must name the listener whose grants apply: ${shape}`;
  if (args !== undefined && (args === null || typeof args !== 'object' || Array.isArray(args)))
    return `"args" must be a JSON object (the tool's arguments): ${shape}`;
  const ask: Ask = { as, args: (args ?? {}) as Record<string, unknown> };
  if (scope !== undefined) {
    if (!Array.isArray(scope) || scope.some((s) => !(CAPABILITIES as readonly unknown[]).includes(s)))
      return `"scope" must be a list of capabilities, some of ${CAPABILITIES.join(', ')}`;
    ask.scope = scope as Capability[];
  }
  return ask;
}
