/**
 * The BaseX backend against a real BaseX server (test/helpers/basex.ts starts one for this file):
 * the contract suite, plus what is BaseX's own: read permission for queries (no file system through
 * doc()), parse errors with their position, the password never in an error.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BasexBackend } from '../../librarian/basex/backend.ts';
import { OrganismError } from '../../src/errors.ts';
import { type BasexServer, startBasex } from '../helpers/basex.ts';
import { backendContract } from './backend.contract.ts';

const C = '/db/organism';
let server: BasexServer;

beforeAll(async () => {
  server = await startBasex();
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

function backendFor(password = server.password): BasexBackend {
  return new BasexBackend({
    host: server.host,
    port: server.port,
    user: server.user,
    password: () => password,
    defaultCollection: C,
  });
}

/** Empties the database between tests: one server serves the whole file. */
async function wipe(backend: BasexBackend): Promise<void> {
  await backend.delete('/db/organism', { recursive: true }).catch(() => {});
  for (const c of (await backend.list('/db')).collections) await backend.delete(c.path, { recursive: true });
}

backendContract('basex (real basexserver)', async () => {
  const backends: BasexBackend[] = [];
  const open = async () => {
    const backend = backendFor();
    backends.push(backend);
    await backend.start();
    return backend;
  };
  const first = await open();
  await wipe(first);
  return {
    backend: first,
    reopen: open,
    async cleanup() {
      for (const b of backends) await b.close();
    },
  };
});

async function failure(promise: Promise<unknown>): Promise<OrganismError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(OrganismError);
    return error as OrganismError;
  }
  throw new Error('expected the call to fail');
}

describe('BaseX backend', () => {
  it("runs queries with read permission: doc() cannot read the server machine's files", async () => {
    const file = join(server.home, 'outside.xml');
    await writeFile(file, '<secret>42</secret>');
    const backend = backendFor();
    try {
      const error = await failure(backend.query(`doc("${file}")`, { collection: C, maxResults: 10 }));
      expect(error.code).toBe('librarian.query');
      expect(error.message).toContain('permission');
      expect(error.message).not.toContain('42');
    } finally {
      await backend.close();
    }
  });

  it('refuses an updating query, and a wrong password without showing it', async () => {
    const backend = backendFor();
    try {
      const error = await failure(
        backend.query(`db:delete('db', 'organism')`, { collection: C, maxResults: 10 }),
      );
      expect(error.code).toBe('librarian.read_only');
    } finally {
      await backend.close();
    }
    const wrong = backendFor('not-the-password-xyz');
    try {
      const error = await failure(wrong.list(C));
      expect(error.code).toBe('librarian.auth');
      expect(error.message).toBe(
        `BaseX at ${server.host}:${server.port} refused the credentials of user "admin"`,
      );
      expect(JSON.stringify(error.details)).not.toContain('not-the-password-xyz');
    } finally {
      await wrong.close();
    }
  });

  it('gives maps and arrays as JSON', async () => {
    const backend = backendFor();
    try {
      expect(await backend.query('(map{"a": 1}, [1, "x"])', { collection: C, maxResults: 10 })).toEqual({
        hits: 2,
        results: ['{"a":1}', '[1,"x"]'],
      });
    } finally {
      await backend.close();
    }
  });

  // Found by the QT3 run (string-constructor-004, K2-OrderbyExprWithout-25): atomic values arrive
  // unescaped, so unescaping them again changed the text, and binary values arrived as raw bytes.
  it('gives strings, text nodes and binary values as their XPath string value', async () => {
    const backend = backendFor();
    try {
      const query =
        '("a &amp;lt; b", xs:untypedAtomic("&amp;amp;"), <a>x &amp;lt; y &amp;amp; z</a>/text(), ' +
        '<a v="&amp;quot;"/>/@v, xs:hexBinary("FF01"), xs:base64Binary("AAE="), "<e/>")';
      expect(await backend.query(query, { collection: C, maxResults: 10 })).toEqual({
        hits: 7,
        results: ['a &lt; b', '&amp;', 'x &lt; y &amp; z', '&quot;', 'FF01', 'AAE=', '<e/>'],
      });
    } finally {
      await backend.close();
    }
  });

  it('says where a server that is not running is', async () => {
    const backend = new BasexBackend({
      host: '127.0.0.1',
      port: 9,
      user: 'admin',
      password: () => 'x',
      defaultCollection: C,
    });
    try {
      const error = await failure(backend.list(C));
      expect(error.code).toBe('librarian.backend');
      expect(error.message).toContain('cannot reach BaseX at 127.0.0.1:9');
    } finally {
      await backend.close();
    }
  });
});
