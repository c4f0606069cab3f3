/**
 * Human approval of tool calls: the settings (tool_config `approval`, `approval_timeout_ms`,
 * `approval_role`, `approval_max_pending`, `approval_elicitation`), what an approval looks like in the API, and why a call needs one.
 */
import { schemaDefault } from '../../config/schema.ts';
import type { ClientChannel } from '../../mcp/server/client-channel.ts';
import type { ToolDefinition } from '../types.ts';

export const APPROVAL_MODES = ['never', 'destructive', 'always'] as const;
export type ApprovalMode = (typeof APPROVAL_MODES)[number];

export const APPROVAL_ROLES = ['operator', 'admin'] as const;
export type ApprovalRole = (typeof APPROVAL_ROLES)[number];

export type ApprovalState = 'pending' | 'approved' | 'denied' | 'timed_out';

/** Longest decision reason kept (the API's, the CLI's and an elicitation's). */
export const MAX_REASON_CHARS = 1000;

/** One listener's approval settings for one tool, defaults applied. */
export interface ApprovalSettings {
  mode: ApprovalMode;
  timeoutMs: number;
  role: ApprovalRole;
  /** Calls of this listener and tool that may wait for a person at once, per daemon. */
  maxPending: number;
  /** Also ask the user of the MCP client whose call started the thread (elicitation), where it may decide. */
  elicit: boolean;
}

/** organism.schema.json's defaults of a tool_config entry's approval keys. */
export function defaultApprovalSettings(): ApprovalSettings {
  const key = (name: string) => `listeners[].tool_config.*.${name}`;
  return {
    mode: schemaDefault<ApprovalMode>(key('approval')),
    timeoutMs: schemaDefault<number>(key('approval_timeout_ms')),
    role: schemaDefault<ApprovalRole>(key('approval_role')),
    maxPending: schemaDefault<number>(key('approval_max_pending')),
    elicit: schemaDefault<boolean>(key('approval_elicitation')),
  };
}

/** An approval as the API, the CLI, the stream and the store show it (README "Approval"). */
export interface Approval {
  id: string;
  state: ApprovalState;
  thread: string;
  listener: string;
  tool: string;
  call_id: string;
  /** As they run, only values of the daemon's own secrets masked (view.ts). */
  args: unknown;
  /** Hex SHA-256 of the canonical JSON of the arguments as they run, masked parts included. */
  args_sha256: string;
  verdict: 'allow' | 'warn' | 'deny' | null;
  rule_id: string | null;
  /** Why this call needs approval: `always`, or `destructive: ...`. */
  why: string;
  /** Role needed to decide. */
  role: ApprovalRole;
  requested: string;
  expires: string;
  decided_by: string | null;
  decided_at: string | null;
  /** The decider's reason (redacted), or why it timed out. */
  reason: string | null;
}

/** What the dispatcher knows of a call when it asks. */
export interface ApprovalAsk {
  thread: string;
  listener: string;
  tool: string;
  callId: string;
  /** The arguments as they will run (schema defaults applied); the person is shown reviewView(args). */
  args: unknown;
  verdict: Approval['verdict'];
  ruleId: string | null;
  why: string;
  settings: ApprovalSettings;
  /** The MCP client whose call the call runs for (CallRequest.client): its user may be asked too. */
  client?: ClientChannel;
}

/**
 * Why the call needs a person's approval under `mode`, or null when it does not. `destructive`:
 * the guard warned, the tool has side effects, or it came from outside (an MCP server) and is not
 * marked read-only. The MCP client sets `readOnly` from the server's `readOnlyHint` annotation:
 * that flag is the hook deciding whether an external tool counts as destructive.
 */
export function approvalReason(
  mode: ApprovalMode,
  tool: Pick<ToolDefinition, 'sideEffect' | 'source' | 'readOnly'>,
  verdict: Approval['verdict'],
): string | null {
  if (mode === 'never') return null;
  if (mode === 'always') return 'always';
  if (verdict === 'warn') return 'destructive: the guard warned';
  if (tool.sideEffect === true) return 'destructive: the tool has side effects';
  if (tool.source === 'external' && !tool.readOnly)
    return 'destructive: an external tool not marked read-only';
  return null;
}
