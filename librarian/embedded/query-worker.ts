/**
 * The embedded librarian's query thread. fontoxpath evaluates synchronously and cannot be
 * interrupted, so a query such as `count(1 to 10000000000)` would block the daemon's event loop
 * for as long as it runs; here it blocks only this worker, which query-runner.ts terminates when
 * the call's signal aborts (the runtime's timeout) and replaces with a fresh one.
 *
 * The worker keeps its own parsed copy of the documents: it reads the store from disk at start
 * and then applies the `set` / `delete` messages the backend sends after each change, in order,
 * so a query always sees every change that completed before it was sent.
 */
import { parentPort } from 'node:worker_threads';
import type { Document } from 'slimdom';
import { OrganismError } from '../../src/errors.ts';
import { isWithin, ROOT } from '../paths.ts';
import { parseWellFormed } from '../xml-check.ts';
import { DiskStore } from './disk.ts';
import { evaluateQuery } from './evaluate.ts';
import type { DocumentSource } from './functions.ts';
import type { WorkerReply, WorkerRequest } from './query-protocol.ts';

const docs = new Map<string, Document>();
const paths = new WeakMap<Document, string>();

const source: DocumentSource = {
  collectionDocuments(collection) {
    const out: Array<[string, Document]> = [];
    for (const [path, doc] of docs)
      if (isWithin(path, collection) && path !== collection) out.push([path, doc]);
    return out.sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([, d]) => d);
  },
  document: (path) => docs.get(path) ?? null,
  pathOf: (doc) => paths.get(doc) ?? null,
};

function set(path: string, content: string): void {
  try {
    const doc = parseWellFormed(content, path);
    docs.set(path, doc);
    paths.set(doc, path);
  } catch {
    // The backend only sends documents it has parsed; a file edited into garbage is skipped.
  }
}

async function load(dir: string): Promise<void> {
  const disk = new DiskStore(dir);
  if ((await disk.kind(ROOT)) !== 'collection') return;
  for (const path of await disk.walk(ROOT, { sweep: false })) {
    const content = await disk.read(path);
    if (content !== null) set(path, content);
  }
}

async function handle(message: WorkerRequest): Promise<WorkerReply | null> {
  switch (message.type) {
    case 'init':
      await load(message.dir);
      return null;
    case 'set':
      set(message.path, message.content);
      return null;
    case 'delete':
      for (const path of [...docs.keys()]) if (isWithin(path, message.path)) docs.delete(path);
      return null;
    case 'query': {
      const readable = message.readable ? new Set(message.readable) : null;
      try {
        const result = evaluateQuery(
          message.query,
          {
            source,
            collection: message.collection,
            canRead: (p) => readable === null || readable.has(p) || !docs.has(p),
          },
          { variables: message.variables, maxResults: message.maxResults },
        );
        return { id: message.id, ok: true, result };
      } catch (error) {
        const e =
          error instanceof OrganismError ? error : new OrganismError('librarian.query', String(error));
        return { id: message.id, ok: false, error: { code: e.code, message: e.message, details: e.details } };
      }
    }
  }
}

// Messages are handled one at a time, in the order sent: a query waits for the changes before it.
// If the store could not be read, every query says so rather than answering from nothing.
let broken: string | null = null;
let chain: Promise<void> = Promise.resolve();
parentPort?.on('message', (message: WorkerRequest) => {
  chain = chain.then(async () => {
    if (broken && message.type === 'query') {
      parentPort?.postMessage({
        id: message.id,
        ok: false,
        error: { code: 'librarian.io', message: broken, details: undefined },
      });
      return;
    }
    try {
      if (message.type === 'query') parentPort?.postMessage({ id: message.id, started: true });
      const reply = await handle(message);
      if (reply) parentPort?.postMessage(reply);
    } catch (error) {
      broken = `the embedded librarian's query thread could not read the store: ${(error as Error).message}`;
    }
  });
});
