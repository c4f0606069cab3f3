import { judgeThread } from '../../bus/await-reply.ts';
import type { MessageView } from '../../bus/message.ts';
import { UsageError } from '../../errors.ts';
import { type DaemonTarget, resolveTarget } from '../../server/client.ts';
import { CONFIG_OPTION, parseCommandArgs } from '../args.ts';
import type { CommandIo } from '../io.ts';

export const summary = 'send a payload to a running daemon; --wait prints the thread as it unfolds';

/**
 * Exit codes past 0 (sent; with --wait or --json, answered or ended without a failure) and
 * 1 (refused, unreachable, a usage mistake): how the thread ended, for scripts.
 */
export const SEND_EXIT = { failed: 3, stopped: 4, timeout: 5 } as const;

/** `--timeout` bounds: those of POST /api/v1/call, which --json asks. */
const TIMEOUT_MAX_MS = 300_000;

const HELP = `usage: organism send [--to LISTENER] '<payload/>' [--wait | --json] [--timeout MS] [--thread ID]
                     [--url URL] [--config FILE] [--token-env NAME] [--scope CAP,CAP...]

Posts the payload to the daemon (--url, else $ORGANISM_URL, else the address the running daemon
wrote into its data_dir, else organism.yaml's server section) and prints {"thread", "message"}.

  --wait         then prints each message of the thread as it arrives, until nothing is left in
                 flight
  --json         waits for the reply instead (POST /api/v1/call) and prints one JSON object:
                 {"thread", "status": "replied", "reply": {"tag", "payload", "xml"}} with the payload
                 decoded by the listener's response schema, or {"thread", "status": "ended",
                 "reply": null}; a failure prints the API's {"error": {...}} with the thread id
  --timeout MS   give up waiting after MS milliseconds (the thread goes on); with --json 1..${TIMEOUT_MAX_MS},
                 default 30000; with --wait no limit unless given
  --thread ID    continue a thread (a unique prefix of 8+ characters will do)
  --scope CAPS   limits the tools any listener may use in a new thread to these capabilities (read,
                 write, fetch_web, exec_shell, db_read, db_write, send_email, post_webhook)

Exit codes: 0 sent (with --wait or --json: the listener replied, or the thread ended without a
failure); 1 refused or unreachable; ${SEND_EXIT.failed} the thread failed (a handler failure, a <SystemError> or <huh>);
${SEND_EXIT.stopped} the thread was stopped (killed, or out of its budget); ${SEND_EXIT.timeout} no end within --timeout.

Needs an operator token in ORGANISM_TOKEN (or the variable --token-env names), from the environment
or the .env beside organism.yaml; on the daemon's machine none: the local token of its data dir
(<data_dir>/api-token) is used. -h, --help shows this help.

examples:
  npx organism send --to hello '<hello><name>Ada</name></hello>' --wait
  npx organism send '<hello><name>Ada</name></hello>' --json     # routed by the root tag
  npx organism send --thread 3f2a9c1d '<hello><name>Grace</name></hello>'`;

export async function run(argv: string[], io: CommandIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    ...CONFIG_OPTION,
    to: { type: 'string' },
    wait: { type: 'boolean', short: 'w' },
    json: { type: 'boolean' },
    timeout: { type: 'string' },
    thread: { type: 'string' },
    url: { type: 'string' },
    'token-env': { type: 'string' },
    scope: { type: 'string' },
  });
  if (values.help) {
    io.out(HELP);
    return 0;
  }
  if (positionals.length !== 1)
    throw new UsageError("give exactly one payload, e.g. '<greeting><name>Ada</name></greeting>'");
  const timeoutMs = timeoutOf(values.timeout, values.json === true);
  const target = await resolveTarget(values);
  const request = {
    to: values.to,
    payload: positionals[0],
    thread: values.thread,
    // --scope read,fetch_web: the new thread's tools are limited to these capabilities.
    scope: values.scope
      ?.split(',')
      .map((c) => c.trim())
      .filter(Boolean),
  };
  if (values.json) return callForJson(target, { ...request, timeout_ms: timeoutMs }, io);
  const posted = await postJson(target, '/api/v1/inject', request, io);
  if (posted === undefined) return 1;
  const body = posted.body as { thread?: string; message?: string; error?: ApiErrorBody };
  if (!posted.ok || !body.thread) return refused(target, posted.status, body.error, io);
  io.out(JSON.stringify(body));
  if (!values.wait) return 0;
  return follow(target, body.thread, values.to, body.message, timeoutMs, io);
}

interface ApiErrorBody {
  code: string;
  message: string;
  thread?: string;
}

/** `--timeout` in ms; undefined for --wait with none given (no limit). */
function timeoutOf(given: string | undefined, json: boolean): number | undefined {
  if (given === undefined) return undefined;
  const ms = Number(given);
  if (!/^\d+$/.test(given) || ms < 1 || (json && ms > TIMEOUT_MAX_MS))
    throw new UsageError(
      `--timeout must be a whole number of milliseconds${json ? `, 1..${TIMEOUT_MAX_MS} with --json` : ' from 1'}, not '${given}'`,
    );
  return ms;
}

function authHeaders(target: DaemonTarget): Record<string, string> {
  return target.token ? { authorization: `Bearer ${target.token}` } : {};
}

/** POSTs `body` as JSON; undefined after printing why when the daemon cannot be reached. */
async function postJson(
  target: DaemonTarget,
  path: string,
  body: Record<string, unknown>,
  io: CommandIo,
): Promise<{ ok: boolean; status: number; body: Record<string, unknown> } | undefined> {
  try {
    const response = await fetch(`${target.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...authHeaders(target) },
      body: JSON.stringify(body),
    });
    const answer = (await response.json().catch(() => ({}))) as Record<string, unknown>;
    return { ok: response.ok, status: response.status, body: answer };
  } catch (error) {
    const cause = (error as Error & { cause?: { message?: string } }).cause?.message;
    io.err(
      `organism send: cannot reach the daemon at ${target.url}: ${cause ?? (error as Error).message}. Is 'organism run' running?`,
    );
    return undefined;
  }
}

/** The API's refusal in one line (with what to do about a 401); exit 1. */
function refused(
  target: DaemonTarget,
  status: number,
  error: ApiErrorBody | undefined,
  io: CommandIo,
): number {
  const hint =
    status !== 401
      ? ''
      : target.tokenSource === 'local'
        ? ' (the local token in <data_dir>/api-token was not accepted)'
        : target.token
          ? ` (the token in ${target.tokenEnv}${target.tokenSource === 'dotenv' ? ' of the .env beside organism.yaml' : ''} was not accepted)`
          : ` (set ${target.tokenEnv} to an operator token; on the daemon's machine, give --config of its organism.yaml and the local token is found)`;
  io.err(`organism send: ${status} ${error?.code ?? ''}: ${error?.message ?? 'unexpected answer'}${hint}`);
  return 1;
}

/** --json: one POST /api/v1/call, its answer printed as JSON; the exit code says how the thread ended. */
async function callForJson(
  target: DaemonTarget,
  body: Record<string, unknown>,
  io: CommandIo,
): Promise<number> {
  const posted = await postJson(target, '/api/v1/call', body, io);
  if (posted === undefined) return 1;
  const error = posted.body.error as ApiErrorBody | undefined;
  const ended =
    error?.code === 'call.failed'
      ? SEND_EXIT.failed
      : error?.code === 'call.stopped'
        ? SEND_EXIT.stopped
        : error?.code === 'call.timeout'
          ? SEND_EXIT.timeout
          : undefined;
  if (posted.ok || ended !== undefined) io.out(JSON.stringify(posted.body));
  if (posted.ok) return 0;
  if (ended === undefined) return refused(target, posted.status, error, io);
  io.err(`organism send: ${error!.message}`);
  return ended;
}

/**
 * --wait: prints the thread's messages until it has nothing in flight, then judges it as POST
 * /api/v1/call does (src/bus/await-reply.ts): a failure or a stop is a non-zero exit.
 */
async function follow(
  target: DaemonTarget,
  thread: string,
  to: string | undefined,
  injected: string | undefined,
  timeoutMs: number | undefined,
  io: CommandIo,
): Promise<number> {
  const signal = timeoutMs === undefined ? undefined : AbortSignal.timeout(timeoutMs);
  const messages: MessageView[] = [];
  try {
    const response = await fetch(`${target.url}/api/v1/threads/${encodeURIComponent(thread)}/follow`, {
      headers: authHeaders(target),
      ...(signal ? { signal } : {}),
    });
    if (!response.ok || !response.body) {
      io.err(`organism send: cannot follow thread ${thread}: ${response.status}`);
      return 1;
    }
    const decoder = new TextDecoder();
    let buffered = '';
    let idle = false;
    for await (const chunk of response.body) {
      buffered += decoder.decode(chunk as Uint8Array, { stream: true });
      let newline = buffered.indexOf('\n');
      while (newline >= 0 && !idle) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        newline = buffered.indexOf('\n');
        if (!line) continue;
        const item = JSON.parse(line) as MessageView & { idle?: boolean };
        if (item.idle) idle = true;
        else {
          messages.push(item);
          io.out(`${item.from} -> ${item.to} [${item.kind}] ${item.payload}`);
        }
      }
      if (idle) break;
    }
  } catch (error) {
    if (signal?.aborted) {
      io.err(`organism send: no end within ${timeoutMs} ms; thread ${thread} goes on`);
      return SEND_EXIT.timeout;
    }
    throw error;
  }
  const from = injected === undefined ? -1 : messages.findIndex((m) => m.id === injected);
  const mine = from < 0 ? messages : messages.slice(from);
  const addressed = to ?? mine[0]?.to ?? '';
  const outcome = judgeThread(mine, addressed, 'api', undefined);
  if (outcome.status === 'failed' || outcome.status === 'stopped') {
    const m = outcome.message;
    const what = outcome.status === 'stopped' ? 'was stopped' : 'failed';
    io.err(
      `organism send: thread ${thread} ${what} without a reply from ${addressed}${m ? ` (the ${m.kind} from ${m.from} above)` : ''}`,
    );
    return SEND_EXIT[outcome.status];
  }
  return 0;
}
