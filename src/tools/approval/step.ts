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

/** Null when the call may go on; otherwise the ApprovalDenied refusal the caller reads. */
export async function approvalStep(
  gate: ApprovalGate | undefined,
  input: ApprovalStepInput,
): Promise<Refusal | null> {
  const why = approvalReason(input.settings.mode, input.definition, input.verdict);
  if (why === null) return null;
  const code = 'ApprovalDenied' satisfies ToolFailureCode;
  const denied = (message: string): Refusal => ({ status: 'refused', code, message });
  // Fail closed: a call that must be approved never runs where nobody can approve it.
  if (!gate) return denied(`${input.tool} needs approval (${why}), and this runtime has no approval service`);
  const { definition: _definition, waiting, ...ask } = input;
  waiting?.(true);
  let decided: Awaited<ReturnType<ApprovalGate['ask']>>;
  try {
    decided = await gate.ask({ ...ask, why });
  } catch (error) {
    if (error instanceof ApprovalError && error.code === 'approval.too_many') return denied(error.message);
    throw error;
  } finally {
    waiting?.(false);
  }
  if (decided.state === 'approved') return null;
  const reason = decided.reason ?? 'no reason given';
  return denied(
    decided.state === 'timed_out'
      ? `${input.tool} was not approved: ${reason}, so it is denied (approval ${decided.id})`
      : `${input.tool} was denied by ${decided.decided_by ?? 'unknown'}: ${reason} (approval ${decided.id})`,
  );
}
