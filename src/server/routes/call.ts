/**
 * POST /call: request and response in one. Injects as POST /inject does (the same checks, in the
 * same order: ingress.ts), then waits for the addressed listener's reply to the caller, or the
 * thread's end, within `timeout_ms` (src/bus/await-reply.ts, which the MCP server's calls share):
 *
 *   200 {thread, status: "replied", reply: {tag, payload, xml}}   payload decoded by the listener's
 *                                                                 response schema
 *   200 {thread, status: "ended", reply: null}                    the thread ended, no reply, no failure
 *   502 call.failed | call.stopped, with thread and failure       a handler failed, a SystemError or
 *                                                                 huh, a kill, a spent budget
 *   504 call.timeout, with thread                                 no answer in time; the thread goes on
 */
import { redactKnown } from '../../audit/redact.ts';
import { awaitReply, type ThreadOutcome } from '../../bus/await-reply.ts';
import type { MessageView } from '../../bus/message.ts';
import { CallError } from '../../errors.ts';
import { httpError, toHttpError } from '../errors.ts';
import { type ApiApp, type ApiContext, fail, type RouteDeps } from './common.ts';
import { admitInjection, counted, injectAdmitted } from './ingress.ts';

/** `timeout_ms` of a call: its default, and the most a caller may ask for. */
export const CALL_TIMEOUT = { defaultMs: 30_000, maxMs: 300_000 } as const;

/** The sender a call's payload is injected as, and whose reply is awaited. */
const CALLER = 'api';

export function callRoutes(app: ApiApp, deps: RouteDeps): void {
  const { bus } = deps.service;

  app.post('/api/v1/call', (c) =>
    counted(c, async () => {
      const admitted = await admitInjection(c, deps, 'calling a listener', '"timeout_ms"?');
      if (admitted instanceof Response) return admitted;
      const timeoutMs = timeoutOf(admitted.body.timeout_ms);
      if (typeof timeoutMs === 'string') return fail(c, httpError(400, 'request.invalid', timeoutMs));
      const injected = await injectAdmitted(c, deps, admitted);
      if (injected instanceof Response) return injected;
      const { thread, message } = injected;
      // Routed by tag, the message went to the listener its tag names: its reply is the one awaited.
      const target =
        admitted.request.to ?? bus.thread(thread)?.messages.find((m) => m.id === message)?.to ?? '';
      const outcome = await awaitReply(bus, {
        thread,
        target,
        caller: CALLER,
        timeoutMs,
        from: message,
        signal: c.req.raw.signal,
      });
      deps.logger.debug(
        { thread, by: admitted.principal.name, to: target, outcome: outcome.status },
        'called',
      );
      return answer(c, deps, thread, target, timeoutMs, outcome);
    }),
  );
}

/** The body's `timeout_ms` in milliseconds, or what is wrong with it. */
function timeoutOf(value: unknown): number | string {
  if (value === undefined) return CALL_TIMEOUT.defaultMs;
  if (typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= CALL_TIMEOUT.maxMs)
    return value;
  return `\`timeout_ms\` must be a whole number of milliseconds, 1..${CALL_TIMEOUT.maxMs} (default ${CALL_TIMEOUT.defaultMs})`;
}

function answer(
  c: ApiContext,
  { service }: RouteDeps,
  thread: string,
  target: string,
  timeoutMs: number,
  outcome: ThreadOutcome,
): Response {
  const decode = (from: string, m: MessageView) => {
    try {
      // The history's copy has every known secret masked already; what it decodes to is checked again.
      return redactKnown(service.bus.decodeReply(from, m.payload));
    } catch {
      return { tag: null, payload: null };
    }
  };
  switch (outcome.status) {
    case 'replied': {
      const { tag, payload } = decode(target, outcome.message);
      return c.json({ thread, status: 'replied', reply: { tag, payload, xml: outcome.message.payload } });
    }
    case 'ended':
      return c.json({ thread, status: 'ended', reply: null });
    case 'timeout':
      return fail(
        c,
        toHttpError(
          new CallError(
            'call.timeout',
            `no answer from ${target} within ${timeoutMs} ms; thread ${thread} goes on`,
            { thread },
          ),
        ),
      );
    default: {
      const m = outcome.message;
      const decoded = m ? decode('', m) : undefined;
      const why = decoded?.payload ? `: ${reason(decoded.payload)}` : '';
      const what = outcome.status === 'stopped' ? 'was stopped' : 'failed';
      const mapped = toHttpError(
        new CallError(
          outcome.status === 'stopped' ? 'call.stopped' : 'call.failed',
          `thread ${thread} ${what} without a reply from ${target}${why}`,
          { thread },
        ),
      );
      // What happened, as the thread records it: the failure record, or the SystemError or huh.
      mapped.body.error.failure =
        m && decoded
          ? { kind: m.kind, from: m.from, tag: decoded.tag, payload: decoded.payload, xml: m.payload }
          : null;
      return fail(c, mapped);
    }
  }
}

/** `TypeError: boom (at listeners/x.ts:12)` from a failure record, a SystemError or a huh. */
function reason(payload: Record<string, unknown>): string {
  const text = (key: string) => (typeof payload[key] === 'string' ? (payload[key] as string) : '');
  const head = [
    payload.listener ? `${text('listener')}` : '',
    text('error') || text('code') || text('reason'),
  ]
    .filter(Boolean)
    .join(': ');
  const at = text('at') ? ` (at ${text('at')})` : '';
  return `${head}${text('message') ? `: ${text('message')}` : ''}${at}`;
}
