/** `organism pause LISTENER` and `organism resume LISTENER` (POST /api/v1/listeners/:name/pause|resume). */
import type { OperatorCommand } from '../operator.ts';

interface ListenerAnswer {
  listener: string;
  state: { paused: boolean; depth: number; active: number; capacity: number } | null;
}

export function listenerCommand(action: 'pause' | 'resume'): OperatorCommand {
  const usage =
    action === 'pause'
      ? `usage: organism pause LISTENER [--json] [--url URL] [--config FILE] [--token-env NAME]

Pauses a listener of the running daemon: messages to it wait in its queue (up to its queue length)
and none is handled until 'organism resume LISTENER'. Handlers already running finish. Needs an
admin token (on the daemon's machine, its local token is found).`
      : `usage: organism resume LISTENER [--json] [--url URL] [--config FILE] [--token-env NAME]

Resumes a paused listener of the running daemon: what waited in its queue is handled again.
Needs an admin token (on the daemon's machine, its local token is found).`;
  return {
    name: action,
    usage,
    examples: `  npx organism ${action} hello`,
    argument: 'LISTENER',
    async act(client, name, io, json) {
      const answer = await client.post<ListenerAnswer>(
        `/api/v1/listeners/${encodeURIComponent(name)}/${action}`,
      );
      if (json) {
        io.out(JSON.stringify(answer, null, 2));
        return;
      }
      const s = answer.state;
      const now = s?.paused ? 'paused' : 'running';
      io.out(
        s
          ? `${answer.listener}: ${now} (queue ${s.depth}/${s.capacity}, ${s.active} handling now)`
          : `${answer.listener}: ${now}`,
      );
    },
    // A misspelt name: the API's 404 says which listener was likely meant.
  };
}
