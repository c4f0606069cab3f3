/**
 * Approval by elicitation: a call waiting for a person, in a thread an MCP client's call started,
 * is also put to that client's user (`elicitation/create`, form mode), besides the dashboard, the
 * CLI and the API; the first decision wins, as between those. accept approves, decline denies,
 * cancel (or no answer) decides nothing and the call keeps waiting for the others.
 *
 * Asked only where the API would let the same credential decide: the caller's role must be the
 * approval's role or above (a viewer, or an operator where `approval_role: admin`, is not asked).
 * The message is the line `organism approvals list` prints (approvalLine): what runs, no second
 * rendering. The decision is recorded as any other (gate.decide: audit, thread), `by` naming the
 * token and the client.
 */
import type { ClientChannel, ElicitRequestParams } from '../../mcp/server/client-channel.ts';
import { hasRole } from '../../server/auth.ts';
import { type Approval, MAX_REASON_CHARS } from './types.ts';
import { approvalLine } from './view.ts';

/** What the elicitation needs of the gate: a decision as the API makes one. */
export type Decide = (
  state: 'approved' | 'denied',
  by: string,
  reason: string | null,
  allowed: (role: Approval['role']) => boolean,
) => Promise<unknown>;

/** Whether this channel's user may be asked to decide this approval. */
export function mayElicit(channel: ClientChannel, approval: Approval): boolean {
  return channel.offers.elicitation.form && hasRole(channel.caller, approval.role);
}

/** The form put to the client's user. */
export function approvalElicitation(approval: Approval): ElicitRequestParams {
  return {
    mode: 'form',
    message: `A tool call waits for your approval (accept runs it, decline denies it):\n${approvalLine(approval)}`,
    requestedSchema: {
      type: 'object',
      properties: {
        reason: {
          type: 'string',
          title: 'Reason',
          description: 'Why (kept in the audit log and the thread); optional',
          maxLength: MAX_REASON_CHARS,
        },
      },
    },
  };
}

/** Who decided, for `decided_by` and the audit: the token, and the client by its own name. */
export function elicitedBy(channel: ClientChannel): string {
  // The client names itself: shown, never trusted, so kept printable and short.
  const clean = (text: string) => text.replace(/[^\x20-\x7e]/g, '?').slice(0, 64);
  const { name, version } = channel.client;
  return `${channel.caller.name} via MCP client ${clean(name)}${version ? ` ${clean(version)}` : ''}`;
}

/**
 * Asks, and decides on accept or decline. Resolves when the user answered or the ask ended
 * (`signal`: the call stopped waiting, decided by someone else); never rejects: a client that is
 * gone, refuses or answers too late leaves the approval to the others.
 */
export async function elicitApproval(
  channel: ClientChannel,
  approval: Approval,
  decide: Decide,
  signal: AbortSignal,
): Promise<void> {
  let answer: Awaited<ReturnType<ClientChannel['elicit']>>;
  try {
    answer = await channel.elicit(approvalElicitation(approval), signal);
  } catch {
    return;
  }
  if (signal.aborted || (answer.action !== 'accept' && answer.action !== 'decline')) return;
  const given = answer.content?.reason;
  const reason =
    typeof given === 'string' && given.trim() !== ''
      ? given
      : `${answer.action === 'accept' ? 'approved' : 'declined'} in the MCP client`;
  await decide(answer.action === 'accept' ? 'approved' : 'denied', elicitedBy(channel), reason, (role) =>
    hasRole(channel.caller, role),
  ).catch(() => {
    // Decided first by someone else (approval.decided), or timed out meanwhile: theirs stands.
  });
}
