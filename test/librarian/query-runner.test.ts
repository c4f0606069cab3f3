/**
 * The embedded librarian's query thread (librarian/embedded/query-runner.ts) as the daemon holds it:
 * a worker it has stopped can still report an error while it dies (ERR_WORKER_OUT_OF_MEMORY, seen
 * when `matches('aaa', 'a{2147483647}')` ran past its limit), and that must not become an
 * unhandled 'error' event, which would end the daemon's process.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { QueryRunner } from '../../librarian/embedded/query-runner.ts';

const RUNAWAY = 'count(for $i in 1 to 100000000000 return $i)';

let dir = '';
let runner: QueryRunner | undefined;
afterEach(async () => {
  await runner?.close();
  runner = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
});

function ask(r: QueryRunner, query: string) {
  return r.query({ query, collection: '/db', variables: undefined, maxResults: 10, readable: null });
}

/** The worker the runner is using now (the field is private: this is the thread the daemon holds). */
function currentWorker(r: QueryRunner): Worker {
  const worker = (r as unknown as { worker: Worker | null }).worker;
  if (!worker) throw new Error('no query thread running');
  return worker;
}

/** Makes `worker` report running out of memory as it is terminated, as a dying worker can. */
function diesOutOfMemory(worker: Worker): void {
  const terminate = worker.terminate.bind(worker);
  worker.terminate = () => {
    const error = new Error('Worker terminated due to reaching memory limit: JS heap out of memory');
    // Without a listener, emit() throws: in the daemon, an uncaught exception.
    worker.emit('error', Object.assign(error, { code: 'ERR_WORKER_OUT_OF_MEMORY' }));
    return terminate();
  };
}

describe('the embedded query thread', () => {
  it('survives an error from the thread it stops for time, and answers the next query', async () => {
    dir = await mkdtemp(join(tmpdir(), 'organism-query-runner-'));
    runner = new QueryRunner({ dir, maxQueryMs: 300, maxHeapMb: 256 });
    const stopped = ask(runner, RUNAWAY);
    diesOutOfMemory(currentWorker(runner));
    await expect(stopped).rejects.toThrow('the query ran longer than 300 ms and was stopped');
    const next = await ask(runner, '1 + 1');
    expect(next.results).toEqual(['2']);
  });

  it('survives an error from the thread it closes', async () => {
    dir = await mkdtemp(join(tmpdir(), 'organism-query-runner-'));
    runner = new QueryRunner({ dir, maxQueryMs: 10_000, maxHeapMb: 256 });
    expect((await ask(runner, '"up"')).results).toEqual(['up']);
    diesOutOfMemory(currentWorker(runner));
    const closing = runner;
    runner = undefined;
    await expect(closing.close()).resolves.toBeUndefined();
  });
});
