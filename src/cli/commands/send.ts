import { UsageError } from '../../errors.ts';
import { resolveTarget } from '../../server/client.ts';
import { CONFIG_OPTION, parseCommandArgs } from '../args.ts';
import type { CommandIo } from '../io.ts';

export const summary = 'send a payload to a running daemon; --wait prints the thread as it unfolds';

const HELP = `usage: organism send [--to LISTENER] '<payload/>' [--wait] [--thread ID] [--url URL] [--config FILE]
                     [--token-env NAME] [--scope CAP,CAP...]

Posts the payload to the daemon (--url, else $ORGANISM_URL, else the address the running daemon
wrote into its data_dir, else organism.yaml's server section) and prints {"thread", "message"}. With --wait it prints each message of the thread as it arrives and
returns when the thread has nothing left in flight. --scope limits the tools any listener may use in
the new thread to those capabilities (read, write, fetch_web, exec_shell, db_read, db_write,
send_email, post_webhook). Needs an operator token in ORGANISM_TOKEN (or the variable --token-env
names); on the daemon's machine none: the local token of its data dir (<data_dir>/api-token) is used.`;

export async function run(argv: string[], io: CommandIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    ...CONFIG_OPTION,
    to: { type: 'string' },
    wait: { type: 'boolean', short: 'w' },
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
  const target = await resolveTarget(values);
  const base = target.url;
  const auth: Record<string, string> = target.token ? { authorization: `Bearer ${target.token}` } : {};
  let response: Response;
  try {
    response = await fetch(`${base}/api/v1/inject`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth },
      body: JSON.stringify({
        to: values.to,
        payload: positionals[0],
        thread: values.thread,
        // --scope read,fetch_web: the new thread's tools are limited to these capabilities.
        scope: values.scope
          ?.split(',')
          .map((c) => c.trim())
          .filter(Boolean),
      }),
    });
  } catch (error) {
    io.err(
      `organism send: cannot reach the daemon at ${base}: ${(error as Error).cause ?? (error as Error).message}. Is 'organism run' running?`,
    );
    return 1;
  }
  const body = (await response.json()) as { thread?: string; error?: { code: string; message: string } };
  if (!response.ok || !body.thread) {
    const hint =
      response.status !== 401
        ? ''
        : target.tokenSource === 'local'
          ? ' (the local token in <data_dir>/api-token was not accepted)'
          : target.token
            ? ` (the token in ${target.tokenEnv} was not accepted)`
            : ` (set ${target.tokenEnv} to an operator token; on the daemon's machine, give --config of its organism.yaml and the local token is found)`;
    io.err(
      `organism send: ${response.status} ${body.error?.code ?? ''}: ${body.error?.message ?? 'unexpected answer'}${hint}`,
    );
    return 1;
  }
  io.out(JSON.stringify(body));
  if (!values.wait) return 0;
  return follow(base, auth, body.thread, io);
}

async function follow(
  base: string,
  auth: Record<string, string>,
  thread: string,
  io: CommandIo,
): Promise<number> {
  const response = await fetch(`${base}/api/v1/threads/${encodeURIComponent(thread)}/follow`, {
    headers: auth,
  });
  if (!response.ok || !response.body) {
    io.err(`organism send: cannot follow thread ${thread}: ${response.status}`);
    return 1;
  }
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const chunk of response.body) {
    buffered += decoder.decode(chunk as Uint8Array, { stream: true });
    let newline = buffered.indexOf('\n');
    while (newline >= 0) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      newline = buffered.indexOf('\n');
      if (!line) continue;
      const item = JSON.parse(line) as {
        idle?: boolean;
        from?: string;
        to?: string;
        kind?: string;
        payload?: string;
      };
      if (item.idle) return 0;
      io.out(`${item.from} -> ${item.to} [${item.kind}] ${item.payload}`);
    }
  }
  return 0;
}
