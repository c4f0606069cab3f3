/** `organism pause LISTENER` and `organism resume LISTENER` (POST /api/v1/listeners/:name/pause|resume). */
import { suggestion } from '../../config/suggest.ts';
import type { DaemonClient } from '../../server/client.ts';
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
    explain: (client, name, error) =>
      error.status === 404 ? listenerHint(client, name) : Promise.resolve(''),
  };
}

/** `— did you mean 'greeter'?` from the daemon's own list of listeners, or ''. */
export async function listenerHint(client: DaemonClient, name: string): Promise<string> {
  const { listeners } = await client.get<{ listeners: Array<{ name: string }> }>('/api/v1/listeners');
  return suggestion(
    name,
    listeners.map((l) => l.name),
  );
}
