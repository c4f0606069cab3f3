/**
 * Did-you-mean for a listener name a command takes as a filter (`threads --listener`, `tail
 * --listener`): a filter that names no listener matches nothing and says nothing, so a typo would
 * read as "nothing happened". A name that is no listener of the daemon but close to one gets a note.
 */
import { suggestion } from '../config/suggest.ts';
import type { DaemonClient } from '../server/client.ts';

/** `no listener named 'intak' — did you mean 'intake'?` for each such name of `names`. */
export async function misspeltListeners(client: DaemonClient, names: readonly string[]): Promise<string[]> {
  const { listeners } = await client.get<{ listeners: Array<{ name: string }> }>('/api/v1/listeners');
  const known = listeners.map((l) => l.name);
  return names.flatMap((name) => {
    const hint = known.includes(name) ? '' : suggestion(name, known);
    return hint === '' ? [] : [`no listener named '${name}'${hint}`];
  });
}
