/** Messages between the daemon's thread (export-thread.ts) and the export thread (export-worker.ts). */

/** A hop batch to post: its bytes are `length` bytes from `offset` of `buffer` (transferred). */
export interface ExportRequest {
  id: number;
  buffer: ArrayBuffer;
  offset: number;
  length: number;
  count: number;
}

/** The thread has loaded what it needs and takes batches now. */
export interface ExportReady {
  ready: true;
}

/** What became of it, and the buffer back (transferred), for the next batch to fill. */
export interface ExportReply {
  id: number;
  ok: boolean;
  /** Why it failed: the collector's answer or the error (no request headers). */
  error?: string;
  buffer: ArrayBuffer;
}
