/**
 * Ids by their first characters: the dashboard and `organism tail` show 8, so wherever the API takes
 * a thread or approval id, a prefix of 8 or more characters that one id alone starts with stands
 * for it. Resolved here, in the API, so the CLI, the dashboard and scripts all get it.
 */
import type { BusApi, BusQueries } from '../bus/api.ts';
import { AmbiguousIdError } from '../errors.ts';

/** Shortest prefix taken for an id: what the dashboard shows. */
export const MIN_ID_PREFIX = 8;

/** How many candidates an ambiguous prefix names. */
const MAX_CANDIDATES = 10;

/**
 * `given` itself when it is one of `candidates` or too short to be a prefix; the one candidate it
 * begins when there is one; `given` unchanged when none (the caller says "not found"). Throws
 * AmbiguousIdError when several begin with it.
 */
export function pickByPrefix(
  kind: 'thread' | 'approval',
  given: string,
  candidates: readonly string[],
): string {
  if (given.length < MIN_ID_PREFIX || candidates.includes(given)) return given;
  const matching = candidates.filter((id) => id.startsWith(given));
  if (matching.length === 1) return matching[0]!;
  if (matching.length > 1) throw new AmbiguousIdError(kind, given, matching.slice(0, MAX_CANDIDATES));
  return given;
}

/** The thread id `given` stands for, among the threads this daemon's history holds. */
export function resolveThreadId(bus: BusQueries, given: string): string {
  if (given.length < MIN_ID_PREFIX) return given;
  return pickByPrefix('thread', given, bus.threadIdsStartingWith(given, MAX_CANDIDATES + 1));
}

/** `thread not found: x`, saying how long a prefix must be when `x` is shorter. */
export function threadNotFound(given: string): string {
  return `thread not found: ${given}${given.length < MIN_ID_PREFIX ? ` (an id prefix needs at least ${MIN_ID_PREFIX} characters)` : ''}`;
}

/** For a route that takes a thread filter in its query: the id a prefix stands for, else as given. */
export function threadFilter(bus: BusApi & BusQueries, given: string | undefined): string | undefined {
  return given === undefined ? undefined : resolveThreadId(bus, given);
}
