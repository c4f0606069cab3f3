/**
 * The runtime's own payloads: `<huh>` for output that did not parse, validate or route, and
 * `<SystemError>` for delivery and handler failures. Their text is deliberately generic: it never
 * tells a sender whether a listener it may not address exists.
 */
import { escapeText } from '../xml/codec.ts';

/** Name the runtime writes as `<from>` on the messages it originates. */
export const SYSTEM_SENDER = 'system';

/** How much of a failed attempt a `<huh>` carries back, before base64. */
const HUH_ATTEMPT_BYTES = 2048;

/** Dotted like every OrganismError code; `bus.routing` and `bus.busy` are RoutingError's and BusyError's. */
export type SystemErrorCode =
  | 'bus.routing'
  | 'handler.timeout'
  | 'handler.failed'
  | 'bus.busy'
  | 'bus.budget'
  | 'bus.shutting_down'
  | 'thread.killed';

const SYSTEM_ERROR_TEXT: Record<SystemErrorCode, string> = {
  'bus.routing': 'Message could not be delivered. Please verify your target and try again.',
  'handler.timeout': 'Handler timed out. Please try again.',
  'handler.failed': 'The handler failed while processing the message.',
  'bus.busy': 'The target is busy. Please try again later.',
  'bus.budget': 'The thread has used up its budget; no further messages are accepted in it.',
  'bus.shutting_down': 'The organism is shutting down.',
  'thread.killed': 'The thread was stopped by an operator; no further messages are accepted in it.',
};

const RETRY_ALLOWED: Record<SystemErrorCode, boolean> = {
  'bus.routing': true,
  'handler.timeout': true,
  'handler.failed': true,
  'bus.busy': true,
  'bus.budget': false,
  'bus.shutting_down': false,
  'thread.killed': false,
};

export function systemErrorXml(code: SystemErrorCode, detail?: string): string {
  const message = detail ? `${SYSTEM_ERROR_TEXT[code]} ${detail}` : SYSTEM_ERROR_TEXT[code];
  return (
    `<SystemError><code>${code}</code><message>${escapeText(message)}</message>` +
    `<retry-allowed>${RETRY_ALLOWED[code]}</retry-allowed></SystemError>`
  );
}

export type HuhReason = 'parse' | 'validate' | 'route';

const HUH_TEXT: Record<HuhReason, string> = {
  parse: 'Your output could not be read as XML.',
  validate: 'Your payload does not match what the target accepts.',
  route: 'Your output could not be delivered. Please verify your target and try again.',
};

/**
 * `detail` is only ever a schema validation message about a target the sender was allowed to
 * address; routing failures carry none.
 */
export function huhXml(reason: HuhReason, attempt: string, detail?: string): string {
  // Only the head is encoded (a 1 MB attempt is not copied): a UTF-16 unit is at least one UTF-8
  // byte, so the first HUH_ATTEMPT_BYTES units hold the first HUH_ATTEMPT_BYTES bytes; one more
  // keeps a surrogate pair at the cut whole.
  const truncated = Buffer.byteLength(attempt, 'utf8') > HUH_ATTEMPT_BYTES;
  const encoded = Buffer.from(attempt.slice(0, HUH_ATTEMPT_BYTES + 1), 'utf8')
    .subarray(0, HUH_ATTEMPT_BYTES)
    .toString('base64');
  return (
    `<huh><reason>${reason}</reason><message>${escapeText(HUH_TEXT[reason])}</message>` +
    (detail ? `<detail>${escapeText(detail)}</detail>` : '') +
    `<attempt encoding="base64" truncated="${truncated}">${encoded}</attempt></huh>`
  );
}
