/** Messages between the embedded backend (query-runner.ts) and its query thread (query-worker.ts). */
import type { QueryResult, Variables } from '../backend.ts';

export type WorkerRequest =
  | { type: 'init'; dir: string }
  | { type: 'set'; path: string; content: string }
  /** Deletes a document, or a collection with everything under it. */
  | { type: 'delete'; path: string }
  | {
      type: 'query';
      id: number;
      query: string;
      collection: string;
      variables: Variables | undefined;
      maxResults: number;
      /** Document paths the query may read; null: all. */
      readable: string[] | null;
    };

export type WorkerReply =
  /** Sent when the query starts evaluating: its time limit counts from here, not from start-up. */
  | { id: number; started: true }
  | { id: number; ok: true; result: QueryResult }
  | {
      id: number;
      ok: false;
      error: { code: string; message: string; details: Record<string, unknown> | undefined };
    };
