/**
 * docs/reference/tool-results.md: what a tool call answers, the dispatcher's steps in order with the
 * code each refusal gives, and every code of src/tools/failure-codes.ts. The step table is written
 * here (it is the dispatcher's order, not data the code holds); the test checks each code it names
 * is one of TOOL_FAILURE_CODES and that the page names them all.
 */
import { TOOL_FAILURE_CODES } from '../tools/failure-codes.ts';
import { UPDATE_COMMAND } from './files.ts';

/** The dispatcher's checks in the order it makes them: step, refusal codes, what the message says. */
export const DISPATCH_STEPS: ReadonlyArray<readonly [step: string, codes: string, says: string]> = [
  ['the tool exists', '`ToolNotFound`', 'the name asked for (and a close granted name, if any)'],
  ['granted to this listener', '`PermissionDenied`', '`tool X is not granted to L`; the tool does not run'],
  ['not revoked', '`ToolRevoked`', 'the reason given to `organism tools revoke`'],
  ['integrity', '`IntegrityFailure`', 'which module or function changed since signing'],
  ['available', '`ToolUnavailable`', 'why, e.g. `no smtp section in organism.yaml`'],
  ['arguments valid (ajv)', '`InvalidArguments`', 'each field and what was expected; nothing runs'],
  ["within the thread's capability scope", '`OutsideScope`', 'the capability needed and the scope'],
  [
    'guard verdict',
    '`GuardDenied` (`GuardError` if a guard fails: closed)',
    '`rule_id`, reason and `suggestion`',
  ],
  [
    'approval, where `tool_config` asks for it (see [Approval](../guide/approval.md))',
    '`ApprovalDenied` (`NotReviewable`: the arguments cannot be shown as they run, nobody asked)',
    'who denied it and why, or that nobody answered in time',
  ],
  ['rate limit', '`RateLimited`', 'the limit and when to retry'],
  ['loop', '`LoopDetected`', "same tool, same arguments, 3 times within the thread's last 5 calls"],
];

export function renderToolResultsReference(): string {
  const out = [
    '# Tool results',
    '',
    '<!-- Generated from src/tools/failure-codes.ts by renderToolResultsReference',
    `     (src/reference/tool-results.ts). Edit those, then run: ${UPDATE_COMMAND} -->`,
    '',
    "Every tool call (a code listener's `ctx.tools.call(name, args)`, an agent's, `organism tools",
    "call`, an MCP client's) answers one of these, and never throws:",
    '',
    '```text',
    '{ "status": "ok",      "tool": "...", "value": <the result>, "warnings"?: [...] }',
    '{ "status": "ok",      "tool": "...", "value": "<cut JSON text>", "truncated": { "original_bytes": N } }',
    '{ "status": "refused", "tool": "...", "error": { "code", "message", "rule_id"?, "suggestion"? } }',
    '{ "status": "error",   "tool": "...", "error": { "code", "message" } }',
    '```',
    '',
    'A refusal is an ordinary result the caller can read and act on. The dispatcher checks every',
    'call in this order; the first check that fails answers:',
    '',
    '| step | refusal `error.code` | what the message says |',
    '|---|---|---|',
    ...DISPATCH_STEPS.map(([step, codes, says]) => `| ${step} | ${codes} | ${says} |`),
    '',
    'Then the tool runs with a timeout and an `AbortSignal`; a tool that throws or times out gives',
    '`status: "error"` (`ToolError`, `Timeout`). A `warn` verdict runs the tool and adds the warning to',
    '`warnings`. A result whose JSON is over `max_result_bytes` becomes the first bytes of that JSON, cut',
    'on a UTF-8 character boundary, followed by `[truncated: result was N bytes of JSON, limit M]`, with',
    "`truncated: {original_bytes: N}`. A failure's message (a tool's error, an MCP server's `isError`",
    'text) is cut at 8,192 characters with `... [N more characters not shown]`. Every call, refused or',
    'not, is then written to the audit log.',
    '',
    'A tool that throws an `OrganismError` keeps its own code (see [errors.md](errors.md)), so a',
    "caller can tell a tool's own failure from the runtime's.",
    '',
    '## Every code the runtime gives',
    '',
    '| `error.code` | when |',
    '|---|---|',
    ...Object.entries(TOOL_FAILURE_CODES).map(
      ([code, when]) => `| \`${code}\` | ${when.replace(/\|/g, '\\|')} |`,
    ),
  ];
  return `${out.join('\n')}\n`;
}
