/**
 * The HTTP API as an OpenAPI 3.1 document, built from the route table (operations.ts), the answer
 * schemas (schemas.ts) and the error codes (error-codes.ts). The daemon serves it at
 * GET /api/v1/openapi.json; `npx tsx src/server/openapi/update-reference.ts` writes the same
 * document (dashboard on, the package's version) to docs/reference/http-api.json.
 */
import { schemaDefault } from '../../config/schema.ts';
import { type HttpErrorCode, httpErrorCodes } from './error-codes.ts';
import {
  type Answer,
  DASHBOARD_PATHS,
  OPERATIONS,
  type Operation,
  openApiPath,
  PATH_PARAMETERS,
  pathParameters,
} from './operations.ts';
import { componentSchemas, ref } from './schemas.ts';

export interface OpenApiOptions {
  /** The package's version: the document's `info.version`. */
  version: string;
  /** Whether the daemon serves the dashboard's routes (organism.yaml `server.dashboard`; default true). */
  dashboard?: boolean;
}

export type OpenApiDocument = Record<string, unknown> & {
  paths: Record<string, Record<string, Record<string, unknown>>>;
};

const REASONS: Record<number, string> = {
  400: 'Bad request',
  401: 'No credential, or one the daemon does not know',
  403: 'Refused: the role is too low, or a browser request from another site',
  404: 'Not found',
  405: 'Method not allowed',
  409: 'Conflict',
  413: 'Body too large',
  415: 'Body not JSON',
  422: 'Unprocessable',
  429: 'Too many requests',
  500: 'Internal error',
  502: 'The call failed',
  503: 'Busy or shutting down',
  504: 'The call timed out',
};

/** The error statuses any operation can give, besides its own. */
function errorStatuses(op: Operation): number[] {
  const statuses = new Set(op.errors ?? []);
  if (op.query?.length) statuses.add(400);
  if (op.access !== 'public') statuses.add(401);
  statuses.add(403); // a browser request from another site, on every route
  if (op.body) statuses.add(413);
  statuses.add(500);
  return [...statuses].sort((a, b) => a - b);
}

function errorResponseName(status: number): string {
  return `Error${status}`;
}

function answer(a: Answer): Record<string, unknown> {
  const type = a.type ?? (a.schema ? 'application/json' : undefined);
  return {
    description: a.description,
    ...(type
      ? {
          content: {
            [type]: { schema: a.schema ?? {} },
            ...Object.fromEntries(Object.entries(a.more ?? {}).map(([t, schema]) => [t, { schema }])),
          },
        }
      : {}),
  };
}

function operation(op: Operation): Record<string, unknown> {
  const parameters = [
    ...pathParameters(op.path).map((name) => ({
      name,
      in: 'path',
      required: true,
      description: op.params?.[name] ?? PATH_PARAMETERS[name] ?? name,
      schema: { type: 'string' },
    })),
    ...(op.query ?? []).map((q) => ({
      name: q.name,
      in: 'query',
      required: false,
      description: q.description,
      schema: q.schema,
    })),
  ];
  const responses: Record<string, unknown> = {};
  for (const a of op.answers) responses[String(a.status)] = answer(a);
  // An answer the operation describes itself stands over the shared one of its status.
  for (const status of errorStatuses(op))
    responses[String(status)] ??= { $ref: `#/components/responses/${errorResponseName(status)}` };
  const role =
    op.access === 'public'
      ? 'No credential needed.'
      : `Needs a bearer token with the ${op.access} role${op.access === 'viewer' ? ' (any token)' : ' or above'}.`;
  return {
    operationId: operationId(op),
    tags: [op.tag],
    summary: op.summary,
    description: op.description ? `${op.description}\n\n${role}` : role,
    'x-organism-role': op.access,
    ...(op.access === 'public' ? { security: [] } : {}),
    ...(parameters.length ? { parameters } : {}),
    ...(op.body
      ? {
          requestBody: {
            required: op.body.required,
            content: { 'application/json': { schema: op.body.schema } },
          },
        }
      : {}),
    responses,
  };
}

/** `get /api/v1/threads/:id/follow` -> `getThreadsIdFollow`: stable, unique, readable. */
export function operationId(op: Pick<Operation, 'method' | 'path'>): string {
  const words = op.path
    .replace(/^\/api\/v1/, '')
    .split(/[/._-]+/)
    .filter(Boolean)
    .map((w) => w.replace(/^:/, '').replace('*', 'file'));
  const camel = words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');
  return `${op.method}${camel || 'Dashboard'}`;
}

function errorCodeSchema(codes: readonly HttpErrorCode[]): Record<string, unknown> {
  const table = codes.map((c) => `- \`${c.code}\` (${c.status}): ${c.when}`).join('\n');
  return {
    type: 'string',
    pattern: '^[a-z][a-z0-9_]*(\\.[a-z0-9_]+)+$',
    description: `Stable, dotted, machine-readable (src/errors.ts). The API answers with these:\n\n${table}`,
    examples: codes.map((c) => c.code),
  };
}

function errorResponses(codes: readonly HttpErrorCode[]): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  const statuses = [...new Set([...Object.keys(REASONS).map(Number), ...codes.map((c) => c.status)])].sort(
    (a, b) => a - b,
  );
  for (const status of statuses) {
    const mine = codes.filter((c) => c.status === status).map((c) => `\`${c.code}\``);
    const headers: Record<string, unknown> = {};
    if (status === 401)
      headers['WWW-Authenticate'] = { schema: { type: 'string' }, description: 'Bearer realm="organism"' };
    if (status === 429 || status === 503)
      headers['Retry-After'] = { schema: { type: 'integer' }, description: 'Seconds to wait.' };
    responses[errorResponseName(status)] = {
      description: `${REASONS[status] ?? 'Error'}${mine.length ? `: ${mine.join(', ')}` : ''}.`,
      ...(Object.keys(headers).length ? { headers } : {}),
      content: { 'application/json': { schema: ref('Error') } },
    };
  }
  return responses;
}

/** The document: every operation of OPERATIONS (the dashboard's only when it is served). */
export function openApiDocument(options: OpenApiOptions): OpenApiDocument {
  const codes = httpErrorCodes();
  const paths: OpenApiDocument['paths'] = {};
  for (const op of OPERATIONS) {
    if (options.dashboard === false && DASHBOARD_PATHS.includes(op.path)) continue;
    const path = openApiPath(op.path);
    paths[path] ??= {};
    paths[path][op.method] = operation(op);
  }
  const port = schemaDefault<number>('server.port');
  return {
    openapi: '3.1.0',
    info: {
      title: 'Organism HTTP API',
      version: options.version,
      summary: "The daemon's API: threads, messages, listeners, tools, approvals, audit, MCP and metrics.",
      description:
        'Every route but /healthz and the dashboard\'s files needs `Authorization: Bearer <token>`: a token of organism.yaml `auth.tokens`, or on the daemon\'s machine the local token in `<data_dir>/api-token`. Roles are ordered viewer < operator < admin; each operation says the least it needs (`x-organism-role`). Every error answer is `{"error": {"code", "message", ...}}` with a stable code.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [
      {
        url: 'http://127.0.0.1:{port}',
        description: 'The daemon on this machine (organism.yaml server.host and server.port).',
        variables: { port: { default: String(port) } },
      },
    ],
    security: [{ bearer: [] }],
    tags: [...new Set(OPERATIONS.map((op) => op.tag))].map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: "A token of organism.yaml auth.tokens, or the daemon's local token (admin).",
        },
      },
      schemas: { ...componentSchemas(), ErrorCode: errorCodeSchema(codes) },
      responses: errorResponses(codes),
    },
  };
}
