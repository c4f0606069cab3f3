/**
 * Hop batches are posted to the collector from a worker thread of their own (export-worker.ts):
 * writing ~740 KB of a 2,048-span batch to the socket, and the HTTP client's work around it, cost
 * the bus's thread ~0.6 ms a batch, a third of what exporting a hop cost it. The batch's buffer is
 * transferred, not copied, and comes back with the answer, for the next batch to fill (hop-batch.ts).
 *
 * The thread starts with the first batch (a daemon that exports nothing never has one) and holds
 * no process open while nothing is on its way. Until it has loaded (about a tenth of a second: the
 * SDK's exporter is loaded there too), and for good if it could not, batches are exported from the
 * bus's thread as before (`send` says so), so none waits for it and the queue does not fill
 * meanwhile. If it dies later, every batch it had is counted failed and the next batch starts
 * another. The SDK's own spans (agent, chat, tool: few) are exported from the bus's thread.
 */
import { Worker } from 'node:worker_threads';
import { type ExportResult, ExportResultCode } from '@opentelemetry/core';
import { MODULE_EXT } from '../package-root.ts';
import { workerSource } from '../worker-entry.ts';
import type { ExportReady, ExportReply, ExportRequest } from './export-protocol.ts';
import type { HopChunk } from './hop-batch.ts';
import type { OtlpTarget } from './otlp-delegate.ts';

const SOURCE = workerSource(new URL(`./export-worker${MODULE_EXT}`, import.meta.url).href);

/** A batch's outcome, and its buffer back when the thread returned it. */
export type ExportDone = (result: ExportResult, buffer: Buffer | undefined) => void;

export class ExportThread {
  #worker: Worker | undefined;
  /** The worker has loaded and takes batches. */
  #ready = false;
  /** A worker exited before it had loaded: none is started again. */
  #broken = false;
  #closed = false;
  #next = 1;
  readonly #pending = new Map<number, ExportDone>();
  /** Resolves once the current thread has loaded (true), or could not (false). */
  #loaded: Promise<boolean> = Promise.resolve(false);
  #settleLoaded: (ready: boolean) => void = () => {};

  constructor(private readonly target: OtlpTarget) {}

  /** Starts a thread now, not with the next batch; resolves once it has loaded, or could not. */
  start(): Promise<boolean> {
    if (this.#worker === undefined && !this.#broken && !this.#closed) this.#start();
    return this.#loaded;
  }

  /**
   * Posts `chunk`, whose bytes lie in `buffer` (a Buffer that owns its memory is handed over whole,
   * and unusable here until `done` gives it back; any other is copied). False, and nothing done,
   * while no thread is ready to take it: the caller exports it itself.
   */
  send(chunk: HopChunk, buffer: Buffer, done: ExportDone): boolean {
    const worker = this.#worker;
    if (worker === undefined || !this.#ready) {
      if (worker === undefined) void this.start();
      return false;
    }
    const id = this.#next++;
    this.#pending.set(id, done);
    worker.ref();
    const owned = buffer.byteOffset === 0 && buffer.buffer.byteLength === buffer.length;
    const request: ExportRequest = owned
      ? {
          id,
          buffer: buffer.buffer as ArrayBuffer,
          offset: chunk.bytes.byteOffset,
          length: chunk.bytes.length,
          count: chunk.count,
        }
      : {
          id,
          buffer: new Uint8Array(chunk.bytes).buffer,
          offset: 0,
          length: chunk.bytes.length,
          count: chunk.count,
        };
    worker.postMessage(request, [request.buffer]);
    return true;
  }

  /** Stops the thread (after the batches on their way have been answered: see HopBatch.flush). */
  async close(): Promise<void> {
    this.#closed = true;
    const worker = this.#worker;
    this.#worker = undefined;
    if (worker) await worker.terminate();
    this.#settleLoaded(false);
    this.#lost('the export thread was stopped');
  }

  #start(): void {
    const worker = new Worker(SOURCE, {
      eval: true,
      workerData: this.target,
      // It allocates little (a request's objects a batch): a small young generation keeps its
      // memory down (~3 MB of the ~13 MB the thread costs, most of it the exporter's modules).
      resourceLimits: { maxYoungGenerationSizeMb: 1 },
    });
    this.#ready = false;
    this.#loaded = new Promise((resolve) => {
      this.#settleLoaded = resolve;
    });
    worker.on('message', (reply: ExportReply | ExportReady) => {
      if ('ready' in reply) {
        this.#ready = this.#worker === worker;
        this.#settleLoaded(this.#ready);
        return;
      }
      const done = this.#pending.get(reply.id);
      if (!done) return;
      this.#pending.delete(reply.id);
      if (this.#pending.size === 0) worker.unref();
      done(
        reply.ok
          ? { code: ExportResultCode.SUCCESS }
          : { code: ExportResultCode.FAILED, error: new Error(reply.error ?? 'export failed') },
        Buffer.from(reply.buffer),
      );
    });
    const lost = (why: string): void => {
      if (this.#worker !== worker) return;
      this.#worker = undefined;
      if (!this.#ready) {
        this.#broken = true;
        this.#settleLoaded(false);
      }
      this.#ready = false;
      this.#lost(`the export thread stopped (${why})`);
    };
    worker.on('error', (error) => lost(error.message));
    worker.on('exit', (code) => lost(`exit code ${code}`));
    worker.unref();
    this.#worker = worker;
  }

  /** Every batch not answered is failed. */
  #lost(why: string): void {
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const done of pending) done({ code: ExportResultCode.FAILED, error: new Error(why) }, undefined);
  }
}
