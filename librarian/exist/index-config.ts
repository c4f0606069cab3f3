/**
 * Making sure a collection has a Lucene full-text index, because ft:query silently finds nothing
 * without one. eXist reads a collection's index configuration from
 * /db/system/config<collection>/collection.xconf (the nearest one up the tree applies), so at start
 * the backend looks there and, when there is none, stores INDEX_XCONF and reindexes. An existing
 * xconf is never overwritten: if it has no Lucene <text> index, search falls back and says how to
 * add one. Writing under /db/system/config needs a dba user; a user who may not gets the fallback.
 */
import { parseXmlDocument } from 'slimdom';
import { OrganismError } from '../../src/errors.ts';
import type { ExistClient } from './http.ts';
import { buildQueryBody } from './query-body.ts';

/** Indexes the root element of every document (so whole documents are ranked) with StandardAnalyzer. */
export const INDEX_XCONF = `<collection xmlns="http://exist-db.org/collection-config/1.0">
  <index xmlns:xs="http://www.w3.org/2001/XMLSchema">
    <lucene>
      <analyzer class="org.apache.lucene.analysis.standard.StandardAnalyzer"/>
      <text match="/*"/>
    </lucene>
  </index>
</collection>
`;

export const CONFIG_ROOT = '/db/system/config';

export type IndexState = { indexed: true; created: boolean } | { indexed: false; reason: string };

export function xconfPath(collection: string): string {
  return `${CONFIG_ROOT}${collection}/collection.xconf`;
}

function hasLuceneText(xml: string): boolean {
  try {
    const root = parseXmlDocument(xml).documentElement;
    const lucene = root?.getElementsByTagNameNS('http://exist-db.org/collection-config/1.0', 'lucene')[0];
    return !!lucene?.getElementsByTagNameNS('http://exist-db.org/collection-config/1.0', 'text').length;
  } catch {
    return false;
  }
}

const CREATE_COLLECTION = `declare variable $collection external;
if (xmldb:collection-available($collection)) then false()
else exists(xmldb:create-collection('/db', substring-after($collection, '/db/')))`;

const REINDEX = `declare variable $collection external; xmldb:reindex($collection)`;

/** Creates the collection when missing (so a fresh organism can list it); false when it could not. */
export async function ensureCollection(
  client: ExistClient,
  collection: string,
  signal?: AbortSignal,
): Promise<boolean> {
  if (collection === '/db') return true;
  const response = await client.request('POST', '/db', {
    body: buildQueryBody(CREATE_COLLECTION, { variables: { collection }, max: 1 }),
    contentType: 'application/xml',
    signal,
  });
  if (response.status === 401) throw client.failure(response, collection, 'create');
  return response.status === 200;
}

type Found = IndexState | { missing: true };

/** What the collection.xconf at exactly `collection` says, or missing. Throws only on 401 or no connection. */
async function readConfig(client: ExistClient, collection: string, signal?: AbortSignal): Promise<Found> {
  const path = xconfPath(collection);
  const existing = await client.request('GET', path, { query: { _indent: 'no' }, signal });
  if (existing.status === 401) throw client.failure(existing, path, 'read');
  if (existing.status === 404) return { missing: true };
  if (existing.status !== 200) {
    return {
      indexed: false,
      reason: `could not read ${path}: ${client.failure(existing, path, 'read').message}`,
    };
  }
  if (hasLuceneText(existing.body)) return { indexed: true, created: false };
  return {
    indexed: false,
    reason:
      `the collection.xconf at ${path} has no Lucene <text> index, so ft:query finds nothing; ` +
      'add <lucene><text match="/*"/></lucene> to its <index> and reindex the collection',
  };
}

/**
 * The index state of a collection the librarian does not manage: eXist applies the nearest
 * collection.xconf up the tree, so the ancestors are looked at in turn. Nothing is installed.
 */
export async function findIndex(
  client: ExistClient,
  collection: string,
  signal?: AbortSignal,
): Promise<IndexState> {
  for (let c = collection; c.startsWith('/db'); c = c.slice(0, c.lastIndexOf('/'))) {
    const found = await readConfig(client, c, signal);
    if (!('missing' in found)) return found;
  }
  return {
    indexed: false,
    reason: `no collection.xconf with a Lucene index covers ${collection} (the librarian installs one only for the default collection)`,
  };
}

/**
 * Checks the Lucene index of the default collection and installs it when there is no
 * collection.xconf there. Throws only on 401 or no connection.
 */
export async function ensureIndex(
  client: ExistClient,
  collection: string,
  signal?: AbortSignal,
): Promise<IndexState> {
  const path = xconfPath(collection);
  const found = await readConfig(client, collection, signal);
  if (!('missing' in found)) return found;
  const stored = await client.request('PUT', path, {
    body: INDEX_XCONF,
    contentType: 'application/xml',
    signal,
  });
  if (stored.status !== 201 && stored.status !== 200) {
    if (stored.status === 401) throw client.failure(stored, path, 'store');
    return {
      indexed: false,
      reason: `could not install the Lucene index config at ${path}: ${client.failure(stored, path, 'store').message}`,
    };
  }
  // Documents stored before the config are indexed only by a reindex; one that fails (say, the
  // collection is still empty) costs nothing, as documents stored from now on are indexed anyway.
  try {
    await client.request('POST', '/db', {
      body: buildQueryBody(REINDEX, { variables: { collection }, max: 1 }),
      contentType: 'application/xml',
      signal,
    });
  } catch (error) {
    if (!(error instanceof OrganismError)) throw error;
  }
  return { indexed: true, created: true };
}
