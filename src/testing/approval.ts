/**
 * Approval in tests: the daemon's own ApprovalGate (the request shown as a person sees it, review
 * refusals, approval ids, audit records of each decision), with the test's policy in the person's
 * place. Calls whose tool_config asks for approval wait at the gate as in production; the policy
 * decides each one as it is asked. No policy: every such call is denied, and the denial says how to
 * give one.
 */
import type { AuditSink } from '../audit/log.ts';
import { TestKitError } from '../errors.ts';
import type { RuntimeState } from '../state/store.ts';
import { ApprovalGate } from '../tools/approval/gate.ts';
import type { Approval } from '../tools/approval/types.ts';

/**
 * What a policy is asked: the approval as `organism approvals list` and the dashboard show it to a
 * person. `args` are the arguments as they will run (schema defaults applied; only values of the
 * daemon's own secrets masked), `why` is `always` or `destructive: ...`.
 */
export type ApprovalRequest = Approval;

/** A policy's answer: approve or not, and the reason kept with the decision. */
export type ApprovalAnswer = boolean | { approve: boolean; reason?: string };

/**
 * How a test decides calls that need approval: `approve` all, `deny` all, or a function of each
 * request (it may be async). A function that throws, or answers something else, denies the call.
 */
export type ApprovalPolicy =
  | 'approve'
  | 'deny'
  | ((request: ApprovalRequest) => ApprovalAnswer | Promise<ApprovalAnswer>);

/** `decided_by` of the decisions a policy makes. */
export const POLICY_DECIDER = 'test approval policy';

/** The reason of a denial when the test gave no policy: how to give one. */
export const NO_POLICY =
  "no approval policy was given to this test; pass approval: 'approve', 'deny' or a function of the request to testListener() or testAgent()";

/** How often a waiting call looks for the decision (a decision made before it waits is met so). */
const POLL_MS = 10;

export function checkPolicy(policy: unknown): ApprovalPolicy | undefined {
  if (policy === undefined || policy === 'approve' || policy === 'deny' || typeof policy === 'function')
    return policy as ApprovalPolicy | undefined;
  throw new TestKitError(
    'testing.invalid_option',
    `approval: ${JSON.stringify(policy)} is not a policy; give 'approve', 'deny' or a function of the request that returns true, false or { approve, reason }`,
  );
}

/**
 * A gate whose approvals the policy decides; each decision is pushed onto `decisions` (denials as
 * the organism, timeouts and forged records included).
 */
export function policyGate(options: {
  policy: ApprovalPolicy | undefined;
  state: RuntimeState;
  audit: AuditSink;
  decisions: Approval[];
}): ApprovalGate {
  const gate = new ApprovalGate({ state: options.state, audit: options.audit, pollMs: POLL_MS });
  gate.observe({
    requested(approval) {
      void decide(options.policy, approval).then(({ approve, reason }) =>
        // Decided meanwhile (timed out, denied with its thread): the first decision stands.
        gate
          .decide(approval.id, approve ? 'approved' : 'denied', POLICY_DECIDER, reason, () => true)
          .catch(() => {}),
      );
    },
    decided(approval) {
      options.decisions.push(approval);
    },
  });
  return gate;
}

async function decide(
  policy: ApprovalPolicy | undefined,
  request: ApprovalRequest,
): Promise<{ approve: boolean; reason: string }> {
  if (policy === undefined) return { approve: false, reason: NO_POLICY };
  if (policy === 'approve') return { approve: true, reason: "approval: 'approve'" };
  if (policy === 'deny') return { approve: false, reason: "approval: 'deny'" };
  let answer: unknown;
  try {
    // A copy: what the policy does to its request changes nothing the gate keeps.
    answer = await policy(structuredClone(request));
  } catch (error) {
    return {
      approve: false,
      reason: `the approval policy threw: ${(error as Error)?.message ?? String(error)}`,
    };
  }
  if (typeof answer === 'boolean')
    return { approve: answer, reason: `the approval policy answered ${answer}` };
  if (
    answer !== null &&
    typeof answer === 'object' &&
    typeof (answer as { approve?: unknown }).approve === 'boolean'
  ) {
    const { approve, reason } = answer as { approve: boolean; reason?: unknown };
    return {
      approve,
      reason:
        typeof reason === 'string' && reason !== '' ? reason : `the approval policy answered ${approve}`,
    };
  }
  return {
    approve: false,
    reason: `the approval policy answered ${JSON.stringify(answer) ?? String(answer)}, which is no decision; return true, false or { approve, reason }`,
  };
}
