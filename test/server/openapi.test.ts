/**
 * The OpenAPI document against the code it describes, on the app itself (no daemon): a maintained
 * OpenAPI 3.1 validator accepts it, every schema in it compiles (JSON Schema 2020-12), its paths
 * and methods are exactly the router's, each operation's role is the one its route checks, its
 * enum query parameters are the values the route takes, the error codes the routes answer with
 * are in it with their status, and docs/reference/http-api.json is what the generator writes.
 * Real answers of the daemon against its schemas: openapi-daemon.test.ts.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { Hono } from 'hono';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { Authenticator } from '../../src/server/auth.ts';
import { createApp } from '../../src/server/http.ts';
import { type OpenApiDocument, openApiDocument } from '../../src/server/openapi/document.ts';
import { httpErrorCodes } from '../../src/server/openapi/error-codes.ts';
import { OPERATIONS, openApiPath } from '../../src/server/openapi/operations.ts';
import { REFERENCE_FILE, referenceText } from '../../src/server/openapi/reference.ts';
import { RateLimiter } from '../../src/server/rate-limit.ts';
import type { OrganismService } from '../../src/server/service.ts';
import { STREAM_PATH } from '../../src/server/websocket.ts';
import { ADMIN_TOKEN, OPERATOR_TOKEN, TOKENS_ENV, VIEWER_TOKEN } from './helpers.ts';

const TOKENS = [
  { name: 'root', role: 'admin' as const, token_env: 'TEST_ADMIN_TOKEN' },
  { name: 'ops', role: 'operator' as const, token_env: 'TEST_OPERATOR_TOKEN' },
  { name: 'watcher', role: 'viewer' as const, token_env: 'TEST_VIEWER_TOKEN' },
];
const TOKEN_OF = { viewer: VIEWER_TOKEN, operator: OPERATOR_TOKEN, admin: ADMIN_TOKEN } as const;

/**
 * A service that knows nothing: a route that gets past its checks fails on it (500), which is
 * all the role and parameter checks below need to tell "refused" from "let through".
 */
const service = { bus: {}, info: () => ({ version: '0.0.0-test' }) } as unknown as OrganismService;

function app(dashboard = true): Hono<any> {
  const auth = Authenticator.fromConfig({ tokens: TOKENS }, TOKENS_ENV);
  return createApp(service, {
    maxBodyBytes: 1 << 20,
    logger: pino({ level: 'silent' }),
    auth: () => auth,
    injectLimiter: () => new RateLimiter({ perSecond: 1000, burst: 1000 }),
    host: '127.0.0.1',
    dashboard,
  });
}

/** `GET /api/v1/threads/{id}` for every route the daemon serves: the router's, and the stream's upgrade. */
function servedRoutes(hono: Hono<any>): string[] {
  const routes = hono.routes
    .filter((r) => !(r.method === 'ALL' && r.path === '/*')) // middleware
    .map((r) => `${r.method} ${openApiPath(r.path)}`);
  return [...new Set([...routes, `GET ${STREAM_PATH}`])].sort();
}

function documentedRoutes(doc: OpenApiDocument): string[] {
  return Object.entries(doc.paths)
    .flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`))
    .sort();
}

/** What one side has and the other has not. */
function drift(hono: Hono<any>, doc: OpenApiDocument) {
  const served = servedRoutes(hono);
  const documented = documentedRoutes(doc);
  return {
    undocumented: served.filter((r) => !documented.includes(r)),
    notServed: documented.filter((r) => !served.includes(r)),
  };
}

const request = (hono: Hono<any>, method: string, path: string, token?: string) =>
  hono.request(`http://127.0.0.1${path}`, {
    method: method.toUpperCase(),
    headers: { host: '127.0.0.1', ...(token ? { authorization: `Bearer ${token}` } : {}) },
  });

/** A concrete URL for a router path: every parameter filled in. */
const concrete = (path: string) => path.replace(/:\w+/g, 'abcdefgh12').replace(/\*$/, 'x.js');

describe('the OpenAPI document', () => {
  it('is valid OpenAPI 3.1, with its $refs resolved', async () => {
    const validator = new Validator();
    const result = await validator.validate(openApiDocument({ version: '1.2.3' }));
    expect(result).toEqual({ valid: true });
    expect(validator.version).toBe('3.1');

    // The validator is not blind: a dangling $ref is refused.
    const broken = openApiDocument({ version: '1.2.3' }) as any;
    delete broken.components.schemas.Thread;
    expect((await new Validator().validate(broken)).valid).toBe(false);
  });

  it('every schema in it compiles as JSON Schema 2020-12, strictly', () => {
    const doc = openApiDocument({ version: '1.2.3' }) as any;
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    (addFormats as unknown as (ajv: Ajv2020) => void)(ajv);
    // The document's own keywords beside the schemas are no JSON Schema: only components are added.
    ajv.addSchema({ $id: 'organism-api', components: doc.components }, undefined, undefined, false);
    ajv.addKeyword('components');
    const schemas: unknown[] = [];
    for (const item of Object.values(doc.paths) as any[]) {
      for (const op of Object.values(item) as any[]) {
        for (const p of op.parameters ?? []) schemas.push(p.schema);
        for (const media of Object.values(op.requestBody?.content ?? {}) as any[]) schemas.push(media.schema);
        for (const r of Object.values(op.responses) as any[])
          for (const media of Object.values(r.content ?? {}) as any[]) schemas.push(media.schema);
      }
    }
    expect(schemas.length).toBeGreaterThan(60);
    for (const schema of [...schemas, ...Object.values(doc.components.schemas)]) {
      const text = JSON.stringify(schema).replaceAll('"#/components/', '"organism-api#/components/');
      expect(() => ajv.compile(JSON.parse(text))).not.toThrow();
    }
    // Strict compiling is not blind either: a misspelt type is refused.
    expect(() => ajv.compile({ type: 'strin' })).toThrow();
  });

  it('has exactly the routes the daemon serves, the dashboard with it or without', () => {
    for (const dashboard of [true, false]) {
      expect(drift(app(dashboard), openApiDocument({ version: '1', dashboard }))).toEqual({
        undocumented: [],
        notServed: [],
      });
    }
    const routes = documentedRoutes(openApiDocument({ version: '1' }));
    for (const route of ['POST /api/v1/call', 'POST /api/v1/tools/{tool}/call', 'POST /mcp', 'GET /metrics'])
      expect(routes).toContain(route);
    expect(routes).toContain(`GET ${STREAM_PATH}`);
    expect(routes).toContain('GET /dashboard/{file}');
  });

  it('a route added without its description, or a description without its route, fails the comparison', () => {
    const hono = app();
    hono.get('/api/v1/undescribed', (c) => c.json({}));
    expect(drift(hono, openApiDocument({ version: '1' }))).toEqual({
      undocumented: ['GET /api/v1/undescribed'],
      notServed: [],
    });
    const doc = openApiDocument({ version: '1' });
    delete doc.paths['/api/v1/threads/{id}/follow'];
    doc.paths['/api/v1/gone'] = { get: {} };
    expect(drift(app(), doc)).toEqual({
      undocumented: ['GET /api/v1/threads/{id}/follow'],
      notServed: ['GET /api/v1/gone'],
    });
  });

  it("names each path's parameters, and gives every operation a unique id", () => {
    const doc = openApiDocument({ version: '1' }) as any;
    const ids = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths) as Array<[string, any]>) {
      const inPath = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
      for (const op of Object.values(item) as any[]) {
        const declared = (op.parameters ?? []).filter((p: any) => p.in === 'path').map((p: any) => p.name);
        expect(declared.sort(), path).toEqual(inPath);
        expect(ids.has(op.operationId), op.operationId).toBe(false);
        ids.add(op.operationId);
      }
    }
  });

  it('says the role each route checks: the role below it is refused, the role itself let through', async () => {
    const hono = app();
    let checked = 0;
    for (const op of OPERATIONS) {
      if (op.path === STREAM_PATH) continue; // the upgrade handler's, tested on the daemon
      const path = concrete(op.path);
      const anonymous = await request(hono, op.method, path);
      if (op.access === 'public') {
        expect(anonymous.status, `${op.method} ${op.path}`).not.toBe(401);
        continue;
      }
      expect(anonymous.status, `${op.method} ${op.path} without a token`).toBe(401);
      const holder = await request(hono, op.method, path, TOKEN_OF[op.access]);
      expect([401, 403], `${op.method} ${op.path} as ${op.access}`).not.toContain(holder.status);
      if (op.access !== 'viewer') {
        const below = await request(
          hono,
          op.method,
          path,
          op.access === 'admin' ? OPERATOR_TOKEN : VIEWER_TOKEN,
        );
        expect(below.status, `${op.method} ${op.path} below ${op.access}`).toBe(403);
        expect(((await below.json()) as any).error.code).toBe('auth.forbidden');
      }
      checked++;
    }
    expect(checked).toBeGreaterThan(30);
  });

  it('gives the values and ranges of the query parameters the routes check: those pass, others are refused', async () => {
    const hono = app();
    const checked: string[] = [];
    for (const op of OPERATIONS) {
      if (op.path === STREAM_PATH) continue;
      for (const q of op.query ?? []) {
        const schema = q.schema as { enum?: string[]; minimum?: number; maximum?: number };
        const good =
          schema.enum ?? (schema.maximum !== undefined ? [schema.minimum, schema.maximum].map(String) : []);
        const bad = schema.enum
          ? ['not-a-value']
          : schema.maximum !== undefined
            ? ['0', String(schema.maximum + 1)]
            : [];
        if (good.length === 0) continue;
        const ask = (value: string) =>
          request(hono, op.method, `${concrete(op.path)}?${q.name}=${value}`, ADMIN_TOKEN);
        const codeOf = async (r: Response) =>
          r.status === 400 ? ((await r.json()) as any).error.code : r.status;
        for (const value of bad)
          expect(await codeOf(await ask(value)), `${op.path} ${q.name}=${value}`).toBe('request.query');
        for (const value of good)
          expect(await codeOf(await ask(value)), `${op.path} ${q.name}=${value}`).not.toBe('request.query');
        checked.push(`${op.path} ${q.name}`);
      }
    }
    expect(checked).toEqual([
      '/api/v1/dead-letters limit',
      '/api/v1/threads status',
      '/api/v1/threads limit',
      '/api/v1/messages kind',
      '/api/v1/messages limit',
      '/api/v1/audit verdict',
      '/api/v1/audit type',
      '/api/v1/audit limit',
    ]);
  });

  it('has every error code the routes answer with, with its status', () => {
    const documented = new Map(httpErrorCodes().map((c) => [c.code, c.status]));
    const serverDir = fileURLToPath(new URL('../../src/server/', import.meta.url));
    const files = (readdirSync(serverDir, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts'));
    const found: Array<[string, number | undefined, string]> = [];
    for (const file of files) {
      const text = readFileSync(join(serverDir, file), 'utf8');
      for (const m of text.matchAll(/httpError\(\s*(\d{3}),\s*'([a-z_.]+)'/g))
        found.push([m[2]!, Number(m[1]), file]);
      for (const m of text.matchAll(/status: (\d{3}),\s*code: '([a-z_.]+)'/g))
        found.push([m[2]!, Number(m[1]), file]);
      // An error body written out in full: its status follows the body.
      for (const m of text.matchAll(/\{ error: \{ code: '([a-z_.]+)'[\s\S]*?\}\s*\},\s*(\d{3})/g))
        found.push([m[1]!, Number(m[2]), file]);
    }
    expect(found.length).toBeGreaterThan(15);
    for (const [code, status, file] of found) expect(documented.get(code), `${code} in ${file}`).toBe(status);
    // Statuses from the one mapping: a few that must not drift.
    expect(documented.get('payload.invalid')).toBe(422);
    expect(documented.get('xml.too_large')).toBe(413);
    expect(documented.get('auth.forbidden')).toBe(403);
    expect(documented.get('call.timeout')).toBe(504);
    expect(documented.get('bus.busy')).toBe(503);
  });

  it('docs/reference/http-api.json is the generated document (npx tsx src/server/openapi/update-reference.ts)', () => {
    // A boolean, not the two texts: a diff of 100 KB of JSON says less than the command to run.
    const same = readFileSync(REFERENCE_FILE, 'utf8') === referenceText();
    expect(same, `${REFERENCE_FILE} is not the generated document: run the command above`).toBe(true);
  });
});
