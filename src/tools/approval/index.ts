/** Human approval of tool calls (README "Approval"): settings, the gate, the dispatcher step. */
export {
  ApprovalGate,
  type ApprovalGateOptions,
  type ApprovalObserver,
  approvalId,
  MAX_REASON_CHARS,
} from './gate.ts';
export { approvalStep } from './step.ts';
export {
  APPROVAL_MODES,
  APPROVAL_ROLES,
  type Approval,
  type ApprovalMode,
  type ApprovalRole,
  type ApprovalSettings,
  type ApprovalState,
  approvalReason,
  defaultApprovalSettings,
} from './types.ts';
