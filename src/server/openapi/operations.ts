/**
 * Every route the daemon serves, as one table: method, path (as the router spells it), who may
 * call it, its parameters, body and answers. The OpenAPI document (document.ts) is built from it,
 * and test/server/openapi.test.ts holds it against the router: a route registered without its
 * entry here, an entry for a route that is gone, or a role that is not the one the route checks,
 * fails the suite. The WebSocket stream is answered by the upgrade handler, not the router
 * (websocket.ts), and is listed here with the path that handler answers.
 */
import { MESSAGE_KINDS } from '../../bus/message.ts';
import type { Role } from '../auth.ts';
import { EVENT_KINDS } from '../events.ts';
import { STREAM_PATH } from '../websocket.ts';
import { ref } from './schemas.ts';

type Schema = Record<string, unknown>;

/** `public`: no credential (liveness, the dashboard's files); a role: a bearer token holding it. */
export type Access = Role | 'public';

export interface QueryParameter {
  name: string;
  description: string;
  schema: Schema;
}

export interface Answer {
  status: number;
  description: string;
  /** application/json unless `type` says otherwise; no content when neither is given. */
  schema?: Schema;
  type?: string;
  /** Other media types the same answer may come as, with their schemas. */
  more?: Record<string, Schema>;
}

export interface Operation {
  method: 'get' | 'post' | 'delete';
  /** As the router has it: `:name` for a parameter, a trailing `*` for the rest of the path. */
  path: string;
  access: Access;
  tag: string;
  summary: string;
  description?: string;
  query?: QueryParameter[];
  /** Descriptions of the path's parameters, by name (the common ones are in PATH_PARAMETERS). */
  params?: Record<string, string>;
  body?: { schema: Schema; required: boolean; description?: string };
  answers: Answer[];
  /** Error statuses beyond the ones every route can give (document.ts adds those). */
  errors?: number[];
}

export const PATH_PARAMETERS: Record<string, string> = {
  id: 'The thread id, or a prefix of 8 or more characters that only one thread id starts with.',
  name: "The listener's name.",
  tool: 'The tool: a native or user tool, or `<server>.<tool>` of an MCP server.',
};

const APPROVAL_ID =
  'The approval id, or a prefix of 8 or more characters (`ap_` counted) that only one waiting approval starts with.';

const limit: QueryParameter = {
  name: 'limit',
  description: 'Most items on the page.',
  schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
};
const cursor: QueryParameter = {
  name: 'cursor',
  description: '`next` of the previous page.',
  schema: { type: 'string', maxLength: 500 },
};
const since: QueryParameter = {
  name: 'since',
  description: 'Only activity at or after this time: ISO 8601 or epoch milliseconds.',
  schema: { type: 'string' },
};
const text = (name: string, description: string): QueryParameter => ({
  name,
  description,
  schema: { type: 'string', maxLength: 500 },
});
const oneOf = (name: string, description: string, values: readonly string[]): QueryParameter => ({
  name,
  description,
  schema: { type: 'string', enum: [...values] },
});
const threadFilter = text('thread', 'Only this thread (its id or a unique prefix of 8+ characters).');
const json = (status: number, description: string, schema: Schema): Answer => ({
  status,
  description,
  schema,
});
/** What /mcp refuses with: the MCP transport's JSON-RPC error, or the API's error before it. */
const mcpError = (status: number, description: string): Answer =>
  json(status, description, { anyOf: [ref('Error'), ref('JsonRpc')] });

const describeParts = [
  ['schema', 'xsd', "The XSD of the listener's payload."],
  ['example', 'example', 'An example payload, as XML.'],
  ['prompt', 'prompt', 'The prompt fragment that tells an agent how to address the listener.'],
] as const;

/** Every route, in the order a reader meets them. */
export const OPERATIONS: readonly Operation[] = [
  {
    method: 'get',
    path: '/healthz',
    access: 'public',
    tag: 'service',
    summary: 'Liveness, for supervisors and load balancers; says nothing else',
    answers: [
      json(200, 'The daemon answers.', {
        type: 'object',
        required: ['status'],
        properties: { status: { const: 'ok' } },
      }),
    ],
  },
  {
    method: 'get',
    path: '/api/v1/openapi.json',
    access: 'viewer',
    tag: 'service',
    summary: 'This document',
    description:
      "The same for every daemon of this version (docs/reference/http-api.json in the package's repository): it describes the code, not the organism, so any token may read it.",
    answers: [json(200, 'The OpenAPI 3.1 document.', { type: 'object' })],
  },
  {
    method: 'get',
    path: '/api/v1/session',
    access: 'viewer',
    tag: 'service',
    summary: 'Who the token is, and what its role may do',
    answers: [json(200, "The token's name and role, and the actions it allows.", ref('Session'))],
  },
  {
    method: 'get',
    path: '/api/v1/organism',
    access: 'viewer',
    tag: 'organism',
    summary: 'The running organism: version, uptime, counts, memory, auth, history, reloads',
    answers: [json(200, 'The organism.', ref('Organism'))],
  },
  {
    method: 'get',
    path: '/api/v1/organism/config',
    access: 'viewer',
    tag: 'organism',
    summary: 'organism.yaml as loaded: environment references as written, not their values; secrets masked',
    answers: [json(200, 'The configuration.', { type: 'object' })],
  },
  {
    method: 'post',
    path: '/api/v1/organism/reload',
    access: 'admin',
    tag: 'organism',
    summary: 'Reload organism.yaml; a file with problems is refused and the organism runs unchanged',
    answers: [
      json(200, 'Applied: what was added, removed, replaced, and what needs a restart.', ref('ReloadReport')),
    ],
    errors: [409, 422],
  },
  {
    method: 'get',
    path: '/metrics',
    access: 'viewer',
    tag: 'organism',
    summary: 'Prometheus metrics, in the text exposition format',
    answers: [{ status: 200, description: 'The metrics.', type: 'text/plain', schema: { type: 'string' } }],
  },
  {
    method: 'get',
    path: '/api/v1/metrics/series',
    access: 'viewer',
    tag: 'organism',
    summary: 'Messages per second and mean hop latency over the last minutes (the dashboard charts)',
    answers: [json(200, 'One point per interval, oldest first.', ref('Series'))],
  },
  {
    method: 'get',
    path: '/api/v1/dead-letters',
    access: 'viewer',
    tag: 'organism',
    summary: 'Messages the bus gave up on after bus.max_deliveries (redis transport), newest first',
    query: [limit, cursor],
    answers: [json(200, 'A page of dead letters.', ref('DeadLetterPage'))],
  },
  {
    method: 'get',
    path: '/api/v1/listeners',
    access: 'viewer',
    tag: 'listeners',
    summary: 'Every listener, with its queue',
    answers: [
      json(200, 'The listeners.', {
        type: 'object',
        required: ['listeners'],
        properties: { listeners: { type: 'array', items: ref('Listener') } },
      }),
    ],
  },
  {
    method: 'get',
    path: '/api/v1/listeners/:name',
    access: 'viewer',
    tag: 'listeners',
    summary: 'One listener, with its queue',
    answers: [json(200, 'The listener.', ref('Listener'))],
    errors: [404],
  },
  ...describeParts.map(
    ([part, key, what]): Operation => ({
      method: 'get',
      path: `/api/v1/listeners/:name/${part}`,
      access: 'viewer',
      tag: 'listeners',
      summary: what,
      answers: [
        json(200, what, {
          type: 'object',
          required: ['listener', key],
          properties: { listener: { type: 'string' }, [key]: { type: 'string' } },
        }),
      ],
      errors: [404],
    }),
  ),
  ...(['pause', 'resume'] as const).map(
    (action): Operation => ({
      method: 'post',
      path: `/api/v1/listeners/:name/${action}`,
      access: 'admin',
      tag: 'listeners',
      summary:
        action === 'pause'
          ? 'Pause a listener: its queue holds new messages until it is resumed'
          : 'Resume a paused listener',
      answers: [json(200, "The listener's queue now.", ref('PauseResult'))],
      errors: [404],
    }),
  ),
  {
    method: 'get',
    path: '/api/v1/threads',
    access: 'viewer',
    tag: 'threads',
    summary: 'Threads, newest activity first, a page at a time',
    query: [
      oneOf('status', 'Only threads in this state.', ['active', 'idle', 'stopped']),
      text('listener', 'Only threads in which this name sent or received a message.'),
      since,
      limit,
      cursor,
    ],
    answers: [json(200, 'A page of threads.', ref('ThreadPage'))],
  },
  {
    method: 'get',
    path: '/api/v1/threads/:id',
    access: 'viewer',
    tag: 'threads',
    summary: 'One thread with its messages',
    answers: [json(200, 'The thread.', ref('Thread'))],
    errors: [400, 404],
  },
  {
    method: 'get',
    path: '/api/v1/threads/:id/follow',
    access: 'viewer',
    tag: 'threads',
    summary: 'Follow a thread: its messages so far, then live ones, then `{"idle": true}`',
    answers: [
      {
        status: 200,
        description:
          'Newline-delimited JSON: one Message a line, and `{"idle": true}` last when the thread goes idle.',
        type: 'application/x-ndjson',
        schema: { type: 'string' },
      },
    ],
    errors: [400, 404],
  },
  {
    method: 'post',
    path: '/api/v1/threads/:id/kill',
    access: 'admin',
    tag: 'threads',
    summary: 'Stop a thread: drop its queued messages, abort its running handlers',
    answers: [json(200, 'What the kill did.', ref('KillReport'))],
    errors: [400, 404],
  },
  {
    method: 'get',
    path: '/api/v1/messages',
    access: 'viewer',
    tag: 'threads',
    summary: 'The most recent messages across threads, newest first',
    query: [
      threadFilter,
      text('listener', 'Only messages from or to this name.'),
      oneOf('kind', 'Only messages of this kind.', MESSAGE_KINDS),
      since,
      limit,
      cursor,
    ],
    answers: [json(200, 'A page of messages.', ref('MessagePage'))],
  },
  {
    method: 'post',
    path: '/api/v1/inject',
    access: 'operator',
    tag: 'messages',
    summary: 'Put a payload on the bus; answers once it is journaled',
    description:
      'Checked in this order: role, rate limit (429), admission (503 while the daemon is behind), body, then the bus: a payload that does not parse, validate or route is refused with the `<huh>` a listener would get. The 202 is a promise: the message survives a crash.',
    body: { schema: ref('InjectRequest'), required: true },
    answers: [json(202, 'Accepted: the thread and the message id.', ref('InjectResult'))],
    errors: [400, 404, 409, 413, 415, 422, 429, 503],
  },
  {
    method: 'post',
    path: '/api/v1/call',
    access: 'operator',
    tag: 'messages',
    summary: "Inject as POST /inject does, then wait for the addressed listener's reply",
    description:
      "The reply's payload is decoded by the listener's response schema. A thread that fails, is stopped, or does not answer in time is an error answer naming the thread.",
    body: { schema: ref('CallRequest'), required: true },
    answers: [json(200, 'The reply, or `ended` when the thread ended without one.', ref('CallResult'))],
    errors: [400, 404, 409, 413, 415, 422, 429, 502, 503, 504],
  },
  {
    method: 'get',
    path: '/api/v1/tools',
    access: 'viewer',
    tag: 'tools',
    summary: 'Every tool; with `as`, whether that listener can use each now',
    query: [text('as', 'A listener: say, for each tool, whether it can use it now and why not.')],
    answers: [
      json(200, 'The tools.', {
        type: 'object',
        required: ['tools'],
        properties: { as: { type: 'string' }, tools: { type: 'array', items: ref('Tool') } },
      }),
    ],
    errors: [404],
  },
  {
    method: 'post',
    path: '/api/v1/tools/:tool/call',
    access: 'operator',
    tag: 'tools',
    summary: "One tool call through the daemon's dispatcher, as a listener would make it",
    description:
      "Runs with the grants, tool_config, trust, guards, rate limits, approval and audit of `as`. An operator may call as the mcp: section's identity only; calling as a listener needs admin. A refused call is a normal result (200); a call that needs approval answers once a person decided.",
    body: { schema: ref('ToolCallRequest'), required: true },
    answers: [json(200, "The call's result, whatever the tool did.", ref('ToolCallResult'))],
    errors: [400, 404, 413, 415, 503],
  },
  {
    method: 'get',
    path: '/api/v1/audit',
    access: 'viewer',
    tag: 'audit',
    summary: 'The audit log, newest first, filtered, a page at a time',
    query: [
      oneOf('verdict', 'Only calls with this guard verdict (none: the guard did not judge).', [
        'allow',
        'warn',
        'deny',
        'none',
      ]),
      text('tool', 'Only calls of this tool.'),
      text('listener', 'Only records of this listener.'),
      threadFilter,
      oneOf('type', 'Only records of this type.', ['call', 'threat', 'change', 'approval']),
      limit,
      { ...cursor, schema: { type: 'string', pattern: '^\\d+$' } },
    ],
    answers: [json(200, 'A page of audit records.', ref('AuditPage'))],
  },
  {
    method: 'get',
    path: '/api/v1/approvals',
    access: 'viewer',
    tag: 'approvals',
    summary: "Tool calls waiting for a person's approval, and recent decisions",
    query: [threadFilter, text('listener', 'Only calls of this listener.')],
    answers: [
      json(200, 'The approvals.', {
        type: 'object',
        required: ['approvals'],
        properties: { approvals: { type: 'array', items: ref('Approval') } },
      }),
    ],
  },
  {
    method: 'get',
    path: '/api/v1/approvals/:id',
    access: 'viewer',
    tag: 'approvals',
    summary: 'One approval',
    params: { id: APPROVAL_ID },
    answers: [json(200, 'The approval.', ref('Approval'))],
    errors: [400, 404],
  },
  ...(['approve', 'deny'] as const).map(
    (action): Operation => ({
      method: 'post',
      path: `/api/v1/approvals/:id/${action}`,
      access: 'operator',
      tag: 'approvals',
      summary: `${action === 'approve' ? 'Approve' : 'Deny'} a waiting tool call (admin where the listener's tool_config says approval_role: admin)`,
      params: { id: APPROVAL_ID },
      body: {
        schema: {
          type: 'object',
          properties: { reason: { type: 'string', description: 'Why, for the record.' } },
        },
        required: false,
      },
      answers: [json(200, 'The decided approval.', ref('Approval'))],
      errors: [400, 404, 409, 413, 415],
    }),
  ),
  {
    method: 'post',
    path: '/mcp',
    access: 'viewer',
    tag: 'mcp',
    summary: 'The organism for MCP clients (Streamable HTTP): JSON-RPC messages',
    description:
      "An initialize opens a session (its id in the `Mcp-Session-Id` answer header; later requests send it); a request with no session and no initialize is answered on its own, as JSON. Any token may list tools and read threads; tools/call needs the operator role (403). A session belongs to the token that opened it. Refusals by the MCP transport are JSON-RPC errors whose `error.data.code` is the organism's code where it has one (`mcp.session_not_found`, `mcp.session_limit`).",
    body: { schema: ref('JsonRpc'), required: true },
    answers: [
      {
        status: 200,
        description: 'The JSON-RPC answer: JSON, or an event stream of messages ending with it.',
        schema: ref('JsonRpc'),
        more: { 'text/event-stream': { type: 'string' } },
      },
      { status: 202, description: 'A notification or response was accepted.' },
      mcpError(400, 'Not JSON-RPC, or not valid for the session (a second initialize...).'),
      mcpError(
        404,
        'No such session for this token (`mcp.session_not_found`), or this organism serves no MCP (`request.not_found`).',
      ),
      mcpError(406, 'The Accept header takes neither JSON nor event streams.'),
      mcpError(415, 'The body is not sent as application/json.'),
      mcpError(503, 'The organism holds as many sessions as mcp.max_sessions allows (`mcp.session_limit`).'),
    ],
  },
  ...(['get', 'delete'] as const).map(
    (method): Operation => ({
      method,
      path: '/mcp',
      access: 'viewer',
      tag: 'mcp',
      summary:
        method === 'get'
          ? "A session's server-to-client event stream (with `Last-Event-ID`: resumed where it broke off)"
          : 'End an MCP session',
      description: 'Needs the `Mcp-Session-Id` header of a session the same token opened.',
      answers: [
        method === 'get'
          ? {
              status: 200,
              description: 'Server-sent events.',
              type: 'text/event-stream',
              schema: { type: 'string' },
            }
          : { status: 200, description: 'The session ended.' },
        mcpError(
          400,
          'No `Mcp-Session-Id` (`mcp.session_required`), or an event id the session cannot resume from.',
        ),
        mcpError(
          404,
          'No such session for this token (`mcp.session_not_found`), or this organism serves no MCP (`request.not_found`).',
        ),
        ...(method === 'get'
          ? [
              mcpError(406, 'The Accept header does not take text/event-stream.'),
              mcpError(409, 'The session has its stream open already.'),
            ]
          : []),
      ],
    }),
  ),
  {
    method: 'get',
    path: STREAM_PATH,
    access: 'viewer',
    tag: 'stream',
    summary: 'Live events over a WebSocket (organism tail, the dashboard)',
    description:
      'Upgrade with `Authorization: Bearer <token>`, or where a browser cannot set headers, the token as a WebSocket subprotocol. Each message is one JSON event. The filters can be changed later with a `subscribe` message.',
    query: [
      text('listeners', 'Only events of these listeners, comma-separated.'),
      text('threads', 'Only events of these threads, comma-separated.'),
      text('kinds', `Only events of these kinds, comma-separated: ${EVENT_KINDS.join(', ')}.`),
    ],
    answers: [{ status: 101, description: 'Switching to the WebSocket protocol.' }],
    errors: [503],
  },
  {
    method: 'get',
    path: '/',
    access: 'public',
    tag: 'dashboard',
    summary: "The dashboard's page (it signs in with a token itself); where server.dashboard is on",
    answers: [{ status: 200, description: 'The page.', type: 'text/html', schema: { type: 'string' } }],
  },
  {
    method: 'get',
    path: '/dashboard/*',
    access: 'public',
    tag: 'dashboard',
    summary: "The dashboard's scripts, styles and images; where server.dashboard is on",
    params: { file: 'The file, below /dashboard/ (it may hold slashes).' },
    answers: [
      {
        status: 200,
        description: 'The file (gzip where the client accepts it).',
        type: 'application/octet-stream',
        schema: { type: 'string' },
      },
    ],
    errors: [404],
  },
];

/** The routes only a dashboard-serving daemon has. */
export const DASHBOARD_PATHS: readonly string[] = ['/', '/dashboard/*'];

/** A router path as OpenAPI writes it: `:id` -> `{id}`, a trailing `*` -> `{file}`. */
export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z_]\w*)/g, '{$1}').replace(/\/\*$/, '/{file}');
}

/** The names of a router path's parameters, in order. */
export function pathParameters(path: string): string[] {
  return [...openApiPath(path).matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
}
