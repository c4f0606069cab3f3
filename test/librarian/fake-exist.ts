/**
 * A local HTTP server (node:http on 127.0.0.1, ephemeral port) that behaves as eXist-db's REST
 * API is documented and implemented (RESTServer.java):
 * - Basic auth; a wrong or missing password gets 401 with `WWW-Authenticate: Basic realm="exist"`;
 * - PUT stores XML when the Content-Type is an XML type (201 Created; anything else is stored as a
 *   binary resource, as eXist does), creating the collections on the way; malformed XML is a 400;
 * - GET returns a document, or the `exist:result/exist:collection` listing of a collection; 404
 *   when neither exists;
 * - DELETE removes a document or a collection (200), 404 when missing;
 * - POST runs an `<exist:query>` body (fake-exist-query.ts) and answers the exist:result wrapper
 *   with hits/start/count, or 400 with `<exception><path/><message/></exception>`.
 * Options turn on what a test needs: a config area the user may not write (no Lucene index).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Document, parseXmlDocument, serializeToWellFormedString } from 'slimdom';
import { EXIST_NS, type FakeStore, QueryFailure, runQueryBody } from './fake-exist-query.ts';

export interface FakeExistOptions {
  user?: string;
  password?: string;
  /** When false, PUT under /db/system/config answers 403 (a user without dba rights). Default true. */
  configWritable?: boolean;
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  contentType: string | undefined;
  authorization: string | undefined;
  body: string;
}

export interface FakeExist extends FakeStore {
  /** REST base URL, as organism.yaml's librarian.url. */
  url: string;
  requests: RecordedRequest[];
  binaries: Map<string, string>;
  close(): Promise<void>;
}

const PREFIX = '/exist/rest';
const CONF_NS = 'http://exist-db.org/collection-config/1.0';

function xmlEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');
}

function exception(path: string, message: string): string {
  return `<?xml version="1.0" ?><exception><path>${xmlEscape(path)}</path><message>${xmlEscape(message)}</message></exception>`;
}

export async function startFakeExist(options: FakeExistOptions = {}): Promise<FakeExist> {
  const docs = new Map<string, Document>();
  const paths = new WeakMap<Document, string>();
  const collections = new Set<string>(['/db', '/db/system', '/db/system/config']);
  const binaries = new Map<string, string>();
  const requests: RecordedRequest[] = [];

  const createCollection = (path: string): void => {
    const parts = path.split('/').filter(Boolean);
    for (let i = 1; i <= parts.length; i++) collections.add(`/${parts.slice(0, i).join('/')}`);
  };
  const store: FakeStore = {
    docs,
    collections,
    pathOf: (doc) => paths.get(doc) ?? null,
    storeXml(path, xml) {
      const doc = parseXmlDocument(xml);
      createCollection(path.slice(0, path.lastIndexOf('/')));
      docs.set(path, doc);
      paths.set(doc, path);
    },
    remove(path) {
      let removed = docs.delete(path) || binaries.delete(path);
      if (collections.has(path)) {
        removed = true;
        for (const c of [...collections]) if (c === path || c.startsWith(`${path}/`)) collections.delete(c);
        for (const p of [...docs.keys(), ...binaries.keys()]) {
          if (p.startsWith(`${path}/`)) {
            docs.delete(p);
            binaries.delete(p);
          }
        }
      }
      return removed;
    },
    createCollection,
    luceneIndexed(collection) {
      for (let c = collection; c.startsWith('/db'); c = c.slice(0, c.lastIndexOf('/'))) {
        const xconf = docs.get(`/db/system/config${c}/collection.xconf`);
        // The nearest collection.xconf up the tree is the one that applies, Lucene index or not.
        if (xconf)
          return (
            (xconf.getElementsByTagNameNS(CONF_NS, 'lucene')[0]?.getElementsByTagNameNS(CONF_NS, 'text')
              .length ?? 0) > 0
          );
      }
      return false;
    },
  };

  const authorized = (req: IncomingMessage): boolean => {
    if (options.user === undefined) return true;
    const expected = `Basic ${Buffer.from(`${options.user}:${options.password ?? ''}`).toString('base64')}`;
    return req.headers.authorization === expected;
  };

  const listing = (path: string): string => {
    const attrs = (name: string) =>
      `name="${xmlEscape(name)}" created="2024-01-01T00:00:00.000Z" owner="admin" group="dba" permissions="rwxr-xr-x"`;
    const subs = [...collections].filter(
      (c) => c.startsWith(`${path}/`) && !c.slice(path.length + 1).includes('/'),
    );
    const resources = [...docs.keys(), ...binaries.keys()].filter(
      (p) => p.startsWith(`${path}/`) && !p.slice(path.length + 1).includes('/'),
    );
    const name = (p: string) => encodeURIComponent(p.slice(p.lastIndexOf('/') + 1));
    return (
      `<?xml version="1.0" encoding="UTF-8"?><exist:result xmlns:exist="${EXIST_NS}"><exist:collection ${attrs(path)}>` +
      subs.map((c) => `<exist:collection ${attrs(name(c))}/>`).join('') +
      resources
        .map((r) => `<exist:resource ${attrs(name(r))} last-modified="2024-01-01T00:00:00.000Z"/>`)
        .join('') +
      '</exist:collection></exist:result>'
    );
  };

  const handle = (req: IncomingMessage, body: string, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const send = (status: number, text = '', type = 'application/xml; charset=UTF-8') => {
      res.writeHead(status, { 'content-type': type });
      res.end(text);
    };
    requests.push({
      method: req.method ?? '',
      path: url.pathname,
      query: url.searchParams,
      contentType: req.headers['content-type'],
      authorization: req.headers.authorization,
      body,
    });
    if (!authorized(req)) {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="exist"', 'content-type': 'text/html' });
      res.end('<html><body>HTTP ERROR 401 Unauthorized</body></html>');
      return;
    }
    if (!url.pathname.startsWith(`${PREFIX}/db`)) return send(404, exception(url.pathname, 'Not found'));
    const path = url.pathname
      .slice(PREFIX.length)
      .split('/')
      .map(decodeURIComponent)
      .join('/')
      .replace(/\/$/, '');
    switch (req.method) {
      case 'GET': {
        const doc = docs.get(path);
        if (doc)
          return send(200, `<?xml version="1.0" encoding="UTF-8"?>\n${serializeToWellFormedString(doc)}`);
        if (binaries.has(path)) return send(200, binaries.get(path), 'application/octet-stream');
        if (collections.has(path)) return send(200, listing(path));
        return send(404, exception(path, `Document ${path} not found`));
      }
      case 'PUT': {
        if (path.startsWith('/db/system/config') && options.configWritable === false) {
          return send(
            403,
            exception(path, `Account '${options.user ?? 'guest'}' is not allowed to write to ${path}`),
          );
        }
        if (collections.has(path)) return send(400, exception(path, `${path} is a collection`));
        const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim() ?? '';
        if (type === 'application/xml' || type === 'text/xml') {
          try {
            store.storeXml(path, body);
          } catch (error) {
            return send(
              400,
              exception(path, `Parsing exception: ${(error as Error).message.split('\n')[0]}`),
            );
          }
        } else {
          createCollection(path.slice(0, path.lastIndexOf('/')));
          binaries.set(path, body);
        }
        return send(201);
      }
      case 'DELETE':
        return store.remove(path)
          ? send(200)
          : send(404, exception(path, `No document or collection found for path: ${path}`));
      case 'POST':
        try {
          return send(200, runQueryBody(body, path, store));
        } catch (error) {
          const message =
            error instanceof QueryFailure
              ? error.message
              : `SAX exception while parsing request: ${(error as Error).message}`;
          return send(400, exception(path, message));
        }
      default:
        return send(405);
    }
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        handle(req, Buffer.concat(chunks).toString('utf8'), res);
      } catch (error) {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(String(error));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    ...store,
    url: `http://127.0.0.1:${port}${PREFIX}`,
    requests,
    binaries,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
