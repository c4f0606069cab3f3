/**
 * Waiting on a thread for the answer to a caller outside the organism (`POST /api/v1/call`, a
 * listener called over MCP, `organism send --wait`): the addressed listener's reply to the caller,
 * or a failure reported to the caller, or the thread's end, or the time running out. One rule for
 * every front door, so they all call the same thread a success or a failure.
 */
import type { BusApi, ThreadStatus } from './api.ts';
import type { MessageView } from './message.ts';

/**
 * - `replied`: the listener answered the caller (`message` is its reply), whatever failed on the
 *   way (an agent that got a `<huh>` and tried again still answered);
 * - `failed`: the caller got a `<SystemError>` or `<huh>`, or the thread ended with a failure in it
 *   and no reply (`message`: the failure record when there is one, else the first SystemError or huh);
 * - `stopped`: the thread was killed or ran out of its budget (`message`: the SystemError saying so);
 * - `ended`: the thread has nothing left in flight, with neither a reply nor a failure;
 * - `timeout`: none of these within the time given (the thread goes on).
 */
export type ThreadOutcome =
  | { status: 'replied'; message: MessageView }
  | { status: 'failed' | 'stopped'; message?: MessageView }
  | { status: 'ended' | 'timeout'; message?: undefined };

export interface AwaitReplyOptions {
  thread: string;
  /** The listener addressed, whose reply is awaited. */
  target: string;
  /** The name the caller injected as (`api`, `mcp`). */
  caller: string;
  timeoutMs: number;
  /**
   * The id of the message the caller injected: only what was recorded from it on counts (a thread
   * continued by the caller may hold replies to earlier calls).
   */
  from?: string;
  /** Gives up (as `timeout`) when aborted: the caller went away. */
  signal?: AbortSignal;
}

const FAILURE_KINDS: ReadonlySet<string> = new Set(['failure', 'system-error', 'huh']);

/** The listener's answer to the caller. */
function isReply(m: MessageView, target: string, caller: string): boolean {
  return m.from === target && m.to === caller && !FAILURE_KINDS.has(m.kind);
}

/** The SystemError a kill or a spent budget records: the thread takes no more work. */
const STOP = /<code>(?:thread\.killed|bus\.budget)<\/code>/;

function isStop(m: MessageView): boolean {
  return m.kind === 'system-error' && STOP.test(m.payload);
}

/** A `<SystemError>` or `<huh>` the runtime sent the caller (the addressed work failed), or a stop. */
function isDecisive(m: MessageView, caller: string): boolean {
  return (m.to === caller && (m.kind === 'system-error' || m.kind === 'huh')) || isStop(m);
}

/**
 * What a thread that has nothing left in flight amounts to for `caller`, from its messages in order
 * (and its status: `stopped` after a kill or a budget). Pure: `organism send --wait` judges the
 * messages it followed with it too.
 */
export function judgeThread(
  messages: readonly MessageView[],
  target: string,
  caller: string,
  status: ThreadStatus | undefined,
): Exclude<ThreadOutcome, { status: 'timeout' }> {
  const reply = messages.find((m) => isReply(m, target, caller));
  if (reply) return { status: 'replied', message: reply };
  const stop = messages.find(isStop);
  if (status === 'stopped' || stop)
    return stop ? { status: 'stopped', message: stop } : { status: 'stopped' };
  // The failure record says why (the handler's error); the SystemError only that it failed.
  const record = messages.find((m) => m.kind === 'failure');
  const failure = record ?? messages.find((m) => FAILURE_KINDS.has(m.kind));
  if (failure) return { status: 'failed', message: failure };
  return { status: 'ended' };
}

/**
 * Resolves with the thread's outcome for `caller`: at the reply or a failure sent to the caller as
 * soon as it is recorded, else when the thread goes idle (judged by judgeThread), else `timeout`.
 */
export function awaitReply(
  bus: Pick<BusApi, 'thread' | 'watch'>,
  options: AwaitReplyOptions,
): Promise<ThreadOutcome> {
  const { thread, target, caller } = options;
  return new Promise((resolve) => {
    let done = false;
    let unwatch = () => {};
    const finish = (outcome: ThreadOutcome) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      unwatch();
      resolve(outcome);
    };
    const judgeNow = () => {
      const view = bus.thread(thread);
      finish(judgeThread(since(view?.messages ?? [], options.from), target, caller, view?.status));
    };
    const onAbort = () => finish({ status: 'timeout' });
    const timer = setTimeout(onAbort, options.timeoutMs);
    if (options.signal?.aborted) return onAbort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    unwatch = bus.watch(thread, {
      onMessage: (m) => {
        if (isReply(m, target, caller)) finish({ status: 'replied', message: m });
        // Judged on the whole thread: a failure record may say more than the SystemError.
        else if (isDecisive(m, caller)) judgeNow();
      },
      onIdle: judgeNow,
    });
    // It may have answered (or failed, or ended) before the watch began.
    const view = bus.thread(thread);
    if (view && view.status !== 'active') judgeNow();
    else if (
      since(view?.messages ?? [], options.from).some(
        (m) => isReply(m, target, caller) || isDecisive(m, caller),
      )
    )
      judgeNow();
  });
}

/** The messages from the one with id `from` on (all of them when it is not among them). */
export function since(messages: readonly MessageView[], from: string | undefined): readonly MessageView[] {
  if (from === undefined) return messages;
  const at = messages.findIndex((m) => m.id === from);
  return at < 0 ? messages : messages.slice(at);
}
