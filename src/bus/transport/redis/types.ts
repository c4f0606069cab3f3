/**
 * Types the Redis transport's parts share (transport, reader, reaper, command batch, thread store,
 * metrics): a leaf module, so none of them imports another just for a type.
 */

/** What one daemon's Redis transport has done since it started (metrics.ts exports them). */
export interface RedisTransportStats {
  published: number;
  acked: number;
  /** Entries taken over from idle consumers by this daemon. */
  claimed: number;
  /** Entries this daemon moved to the dead-letter stream. */
  deadLettered: number;
  /** Entries held here that another daemon took over while this one missed its heartbeats. */
  lost: number;
}

/** A thread's record as the load operation returns it (see RedisThreadStore.load). */
export type LoadReply = (string | null)[] | null;

export type StreamEntry = [id: string, fields: string[] | null];

/**
 * One entry a read returns: `[id, record JSON, thread state]` for an entry in this format (thread
 * state null when none was loaded, see unpackState in batch.ts), or `[id, fields]` for any other,
 * as XREADGROUP gives it, for the reader to refuse with the reason.
 */
export type ReadEntry =
  | [id: string, body: string, state: string | null]
  | [id: string, fields: string[] | null];
