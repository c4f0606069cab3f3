/**
 * Dispatcher step 8a: after the guard (it needs the verdict; a denied call is never put to a person)
 * and before the once claim, rate limit, loop check and run. Before the once claim on purpose: a call
 * waits without holding its call id, so a restart while it waits leaves nothing "in doubt", and the
 * re-run of the same call finds its approval again (see gate.ts) and acts once when approved.
 */
import { ApprovalError } from '../../errors.ts';
import type { ToolFailureCode } from '../failure-codes.ts';
import type { Refusal } from '../run-tool.ts';
import type { ToolDefinition } from '../types.ts';
import type { ApprovalGate } from './gate.ts';
import { type ApprovalAsk, type ApprovalSettings, approvalReason } from './types.ts';

export interface ApprovalStepInput extends Omit<ApprovalAsk, 'why' | 'settings'> {
  settings: ApprovalSettings;
  definition: Pick<ToolDefinition, 'sideEffect' | 'source' | 'readOnly'>;
  /** Told when the call starts (true) and stops (false) waiting for a person: see CallRequest.waiting. */
  waiting?: (on: boolean) => void;
}

/** A person approved the call: which approval, and the digest of the arguments they were shown. */
export interface Approved {
  status: 'approved';
  approval: string;
  args_sha256: string;
}

/** Null when the call needs no approval; Approved; otherwise the refusal the caller reads. */
export async function approvalStep(
  gate: ApprovalGate | undefined,
  input: ApprovalStepInput,
): Promise<Approved | Refusal | null> {
  const why = approvalReason(input.settings.mode, input.definition, input.verdict);
  if (why === null) return null;
  const refused = (message: string, code: ToolFailureCode = 'ApprovalDenied'): Refusal => ({
    status: 'refused',
    code,
    message,
  });
  // Fail closed: a call that must be approved never runs where nobody can approve it.
  if (!gate)
    return refused(`${input.tool} needs approval (${why}), and this runtime has no approval service`);
  const { definition: _definition, waiting, ...ask } = input;
  waiting?.(true);
  let decided: Awaited<ReturnType<ApprovalGate['ask']>>;
  try {
    decided = await gate.ask({ ...ask, why });
  } catch (error) {
    if (!(error instanceof ApprovalError)) throw error;
    if (error.code === 'approval.too_many') return refused(error.message);
    if (error.code === 'approval.not_reviewable')
      return refused(
        `${input.tool} needs approval (${why}), but nobody was asked: ${error.message}`,
        'NotReviewable',
      );
    throw error;
  } finally {
    waiting?.(false);
  }
  if (decided.state === 'approved')
    return { status: 'approved', approval: decided.id, args_sha256: decided.args_sha256 };
  const reason = decided.reason ?? 'no reason given';
  return refused(
    decided.state === 'timed_out'
      ? `${input.tool} was not approved: ${reason}, so it is denied (approval ${decided.id})`
      : `${input.tool} was denied by ${decided.decided_by ?? 'unknown'}: ${reason} (approval ${decided.id})`,
  );
}
