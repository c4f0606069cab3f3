/** What an agent's run ends with: the `<answer>` it responds with, and how its status is read back. */
import type { HandlerResult, Outgoing } from '../listener/types.ts';

export type AnswerStatus = 'done' | 'max_turns' | 'budget' | 'error' | 'busy';

/** What the agent responds with: `<answer><text/><status/><backend/></answer>`. */
export interface Answer {
  text: string;
  status: AnswerStatus;
  backend?: string;
  turns: number;
}

export function answerPayload(answer: Answer): Record<string, unknown> {
  return {
    text: answer.text === '' ? '(no text)' : answer.text,
    status: answer.status,
    turns: answer.turns,
    ...(answer.backend ? { backend: answer.backend } : {}),
  };
}

/** The status of the `<answer>` a run responded with (for its span), else done. */
export function answerStatus(result: HandlerResult): string {
  const outs = Array.isArray(result) ? (result as Outgoing[]) : [];
  const answer = outs.find((o) => o.kind === 'respond' && typeof o.payload === 'object');
  const status = (answer?.payload as { status?: unknown } | undefined)?.status;
  return typeof status === 'string' ? status : 'done';
}
