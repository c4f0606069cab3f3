/**
 * Runs the embedded backend's queries on a worker thread (query-worker.ts), so a query that runs
 * away costs that query, not the daemon: when the call's signal aborts (the runtime's timeout) or
 * `maxQueryMs` passes, the worker is terminated and a fresh one takes over the queries still
 * waiting. The worker also has its own heap limit, so a query that builds an enormous result runs
 * out of memory alone.
 */
import { Worker } from 'node:worker_threads';
import { LibrarianError, OrganismError } from '../../src/errors.ts';
import { MODULE_EXT } from '../../src/package-root.ts';
import { workerSource } from '../../src/worker-entry.ts';
import type { QueryResult } from '../backend.ts';
import type { WorkerReply, WorkerRequest } from './query-protocol.ts';

export interface QueryRunnerOptions {
  /** The store's folder, read by the worker at start. */
  dir: string;
  /** A query still running after this long is stopped (the runtime's own timeout usually comes first). */
  maxQueryMs: number;
  /** Heap limit of the query thread. */
  maxHeapMb: number;
}

type QueryRequest = Extract<WorkerRequest, { type: 'query' }>;

interface Pending {
  request: QueryRequest;
  /** Starts the query's own time limit, when the worker begins evaluating it. */
  started(): void;
  resolve(result: QueryResult): void;
  reject(error: unknown): void;
}

const BOOTSTRAP = workerSource(new URL(`./query-worker${MODULE_EXT}`, import.meta.url).href);

function fromReply(error: {
  code: string;
  message: string;
  details: Record<string, unknown> | undefined;
}): OrganismError {
  return error.code.startsWith('librarian.')
    ? new LibrarianError(error.code as 'librarian.query', error.message, error.details)
    : new OrganismError(error.code, error.message, error.details);
}

export class QueryRunner {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;

  constructor(private readonly options: QueryRunnerOptions) {}

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(BOOTSTRAP, {
      eval: true,
      resourceLimits: { maxOldGenerationSizeMb: this.options.maxHeapMb },
    });
    worker.on('message', (reply: WorkerReply) => {
      const pending = this.pending.get(reply.id);
      if (!pending) return;
      if ('started' in reply) return pending.started();
      this.settle(reply.id);
      if (reply.ok) pending.resolve(reply.result);
      else pending.reject(fromReply(reply.error));
    });
    const lost = (why: string) => {
      if (this.worker !== worker) return;
      this.worker = null;
      for (const [id, pending] of this.pending) {
        this.settle(id);
        pending.reject(
          new LibrarianError(
            'librarian.query',
            `the query thread stopped (${why}); the query did not finish`,
          ),
        );
      }
    };
    worker.on('error', (error) => lost(error.message));
    worker.on('exit', (code) => lost(`exit code ${code}`));
    worker.postMessage({ type: 'init', dir: this.options.dir } satisfies WorkerRequest);
    worker.unref();
    this.worker = worker;
    return worker;
  }

  private settle(id: number): void {
    this.pending.delete(id);
    if (this.pending.size === 0) this.worker?.unref();
  }

  /** Tells a running worker about a change; a worker started later reads it from disk. */
  notify(message: Extract<WorkerRequest, { type: 'set' | 'delete' }>): void {
    this.worker?.postMessage(message);
  }

  /** Stops the running query by replacing the worker; the queries behind it go to the new one. */
  private restart(): void {
    const old = this.worker;
    this.worker = null;
    if (old) discard(old).catch(() => {});
    if (this.pending.size === 0) return;
    const worker = this.start();
    worker.ref();
    for (const { request } of this.pending.values()) worker.postMessage(request);
  }

  query(request: Omit<QueryRequest, 'type' | 'id'>, signal?: AbortSignal): Promise<QueryResult> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const worker = this.start();
    const id = this.nextId++;
    const message: QueryRequest = { type: 'query', id, ...request };
    return new Promise<QueryResult>((resolve, reject) => {
      const stop = (error: unknown) => {
        const pending = this.pending.get(id);
        if (!pending) return;
        this.settle(id);
        pending.reject(error);
        this.restart();
      };
      // The limit is on the query's own evaluation: a worker starting up (loading the engine and the
      // store) or finishing an earlier query must not use it up. The caller's signal bounds the rest.
      let timer: NodeJS.Timeout | undefined;
      const started = () => {
        timer ??= setTimeout(
          () =>
            stop(
              new LibrarianError(
                'librarian.query',
                `the query ran longer than ${this.options.maxQueryMs} ms and was stopped`,
              ),
            ),
          this.options.maxQueryMs,
        );
        timer.unref();
      };
      const onAbort = () =>
        stop(signal?.reason ?? new LibrarianError('librarian.query', 'the query was cancelled'));
      signal?.addEventListener('abort', onAbort, { once: true });
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      this.pending.set(id, {
        request: message,
        started,
        resolve: (result) => {
          done();
          resolve(result);
        },
        reject: (error) => {
          done();
          reject(error);
        },
      });
      worker.ref();
      worker.postMessage(message);
    });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    for (const [id, pending] of this.pending) {
      this.settle(id);
      pending.reject(new LibrarianError('librarian.query', 'the librarian is closing'));
    }
    if (worker) await discard(worker);
  }
}

/**
 * Terminates a worker whose queries are settled already. It keeps a listener for 'error': a worker
 * stopped mid-query can still report one while it dies (ERR_WORKER_OUT_OF_MEMORY from a query such
 * as `matches('aaa', 'a{2147483647}')`, seen in the QT3 run), and an 'error' nobody listens to
 * would take the daemon down with it.
 */
async function discard(worker: Worker): Promise<void> {
  worker.removeAllListeners();
  worker.on('error', () => {});
  await worker.terminate();
}
