/**
 * The daemon's one approval gate (src/tools/approval), built before the first tool runtime and
 * handed to every runtime a reload builds, so a call waiting for a person keeps waiting across a
 * reload. Each new approval becomes an `<approval-request>` record in its thread and each decision
 * an `<approval-decision>` (the thread history is the record, invariant 1), and both go to the live
 * stream.
 */
import type { AuditSink } from '../audit/log.ts';
import type { ThreadHistory } from '../bus/history/memory.ts';
import type { MessageKind } from '../bus/message.ts';
import type { OrganismConfig } from '../config/types.ts';
import { recordPersonWait } from '../observability/hop-samples.ts';
import type { EventHub } from '../server/events.ts';
import type { RuntimeState } from '../state/store.ts';
import { ApprovalGate } from '../tools/approval/gate.ts';
import type { Approval } from '../tools/approval/types.ts';
import { encodePayload } from '../xml/codec.ts';

export interface DaemonApprovalsOptions {
  /** The daemon's runtime state store (src/state), where approvals are kept; opened on first use. */
  state: RuntimeState;
  audit: AuditSink;
}

export function createDaemonApprovals(options: DaemonApprovalsOptions): ApprovalGate {
  return new ApprovalGate({ state: options.state, audit: options.audit });
}

/**
 * Whether any listener's tool_config asks for approval. Approvals left from an earlier config still
 * expire in the list; this spares an organism without approvals the state store on every stopped thread.
 */
export function usesApproval(config: Pick<OrganismConfig, 'listeners'>): boolean {
  return config.listeners.some((listener) =>
    Object.values(listener.tool_config ?? {}).some((c) => c.approval !== undefined && c.approval !== 'never'),
  );
}

/** Wires the gate to the thread history and the stream, once both exist. */
export function recordApprovals(gate: ApprovalGate, history: Pick<ThreadHistory, 'append'>, hub: EventHub) {
  const record = (approval: Approval, kind: MessageKind, id: string, from: string, to: string) => {
    history.append(approval.thread, {
      id,
      from,
      to,
      kind,
      payload: approvalXml(kind, approval),
      time: Date.now(),
    });
    if (hub.size === 0) return;
    hub.publish({
      type: 'approval',
      kind: 'approval',
      event: approval.state === 'pending' ? 'requested' : approval.state,
      thread: approval.thread,
      listener: approval.listener,
      tool: approval.tool,
      approval,
      time: new Date().toISOString(),
    });
  };
  return gate.observe({
    // The call's listener asks on its tool's behalf; the decision goes back to that listener. The
    // record ids name the approval: a re-run of a call with other arguments is another approval.
    requested: (a) => record(a, 'approval-request', `${a.call_id}.${a.id}.approval`, a.listener, 'approvals'),
    decided: (a) => {
      // The dashboard's hop latency leaves out the time the call waited for a person.
      recordPersonWait(
        a.thread,
        Date.parse(a.requested),
        a.decided_at ? Date.parse(a.decided_at) : Date.now(),
      );
      record(a, 'approval-decision', `${a.call_id}.${a.id}.decision`, 'approvals', a.listener);
    },
  });
}

function approvalXml(kind: MessageKind, a: Approval): string {
  const common = { approval: a.id, tool: a.tool, call_id: a.call_id };
  if (kind === 'approval-request') {
    return encodePayload(kind, {
      ...common,
      args: JSON.stringify(a.args),
      verdict: a.verdict ?? 'none',
      rule_id: a.rule_id ?? '',
      why: a.why,
      role: a.role,
      expires: a.expires,
    });
  }
  return encodePayload(kind, {
    ...common,
    decision: a.state,
    by: a.decided_by ?? '',
    reason: a.reason ?? '',
  });
}
