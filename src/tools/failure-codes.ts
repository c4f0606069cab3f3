/**
 * Every code the runtime itself writes into a tool result's `error.code`, in one place, each with
 * the step that gives it. An agent reads these to decide what to do next, and the README's table
 * lists them, so they are stable names (a tool's own OrganismError code passes through as it is).
 */
export const TOOL_FAILURE_CODES = {
  ToolsUnavailable: 'the organism has no tool runtime at all',
  AuditLogChanged:
    'the audit log changed under the runtime; calls wait for an operator (organism audit --acknowledge)',
  ToolNotFound: 'no tool has that name',
  PermissionDenied: 'the tool is not granted to the caller',
  ToolRevoked: 'the tool is revoked',
  IntegrityFailure: 'the tool changed since it was signed',
  ToolUnavailable: 'the tool cannot run in this organism (say, no smtp section)',
  InvalidArguments: 'the arguments do not match the tool schema',
  OutsideScope: "the tool's capability is outside the thread's scope",
  GuardDenied: 'a guard denied the call',
  GuardError: 'a guard failed, so the call is refused (fail closed)',
  ApprovalDenied: 'the person asked denied the call, or did not answer in time',
  NotReviewable: 'the call needs approval, but its arguments cannot be shown to a person as they would run',
  RateLimited: "the listener's rate limit for the tool is spent",
  LoopDetected: 'the same call again and again within a thread',
  EffectInDoubt: 'a side effect under this call id may have happened already',
  NotRepeated: 'a resumed agent call whose recorded arguments lost a secret to redaction',
  Timeout: 'the tool ran past its timeout',
  ToolError: 'the tool threw without a code of its own',
  ResultNotSerializable: 'the result is not JSON data',
  InvalidContent: "the tool's content blocks (toolContent) are not well formed",
  UnreadableRecord: 'a recorded result could not be read back',
  InternalError: 'the tool runtime itself failed',
} as const;

export type ToolFailureCode = keyof typeof TOOL_FAILURE_CODES;
