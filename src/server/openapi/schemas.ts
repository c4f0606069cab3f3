/**
 * The JSON Schemas (2020-12, OpenAPI 3.1's dialect) of what the HTTP API answers, one per shape the
 * routes send. They mirror the TypeScript types the routes answer with (named beside each); a test
 * validates real answers of the daemon against them (test/server/openapi-daemon.test.ts), so a
 * schema that says something the daemon does not do fails the suite. Objects allow fields beyond
 * the ones listed: a client written against the document keeps working when an answer gains one.
 */
import { MESSAGE_KINDS } from '../../bus/message.ts';
import { CAPABILITIES } from '../../tools/types.ts';

type Schema = Record<string, unknown>;

export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const str = (description?: string): Schema => ({ type: 'string', ...(description ? { description } : {}) });
const int = (description?: string): Schema => ({ type: 'integer', ...(description ? { description } : {}) });
const time = (description: string): Schema => ({ type: 'string', format: 'date-time', description });
const nullable = (schema: Schema): Schema => ({ anyOf: [schema, { type: 'null' }] });
const list = (items: Schema): Schema => ({ type: 'array', items });
const object = (properties: Record<string, Schema>, optional: readonly string[] = []): Schema => ({
  type: 'object',
  required: Object.keys(properties).filter((key) => !optional.includes(key)),
  properties,
});
const cursor = nullable(str('Give it as `cursor` for the next page; null on the last page.'));

const THREAD_STATUS = {
  type: 'string',
  enum: ['active', 'idle', 'stopped'],
  description:
    'active: work queued or running; idle: nothing in flight now; stopped: killed or out of budget.',
};
// src/bus/api.ts ListenerState
const listenerState = object({
  paused: { type: 'boolean' },
  depth: int('Messages waiting in its queue.'),
  active: int('Handlers running now.'),
  capacity: int('Messages its queue holds at most (queue_length).'),
  concurrency: int('Handlers that may run at once (max_concurrent).'),
});
const ROLE = { type: 'string', enum: ['viewer', 'operator', 'admin'] };

/** components.schemas of the document. */
export function componentSchemas(): Record<string, Schema> {
  return {
    // src/server/errors.ts HttpError['body']
    Error: object(
      {
        error: {
          type: 'object',
          required: ['code', 'message'],
          properties: {
            code: ref('ErrorCode'),
            message: str('What was wrong and where, for a person.'),
            fields: {
              ...list(object({ path: str(), message: str() })),
              description: 'payload.invalid: every field of the payload that is missing or wrong.',
            },
            issues: {
              ...list(
                object({ file: str(), path: str(), message: str(), line: int(), column: int() }, [
                  'line',
                  'column',
                ]),
              ),
              description: 'config.invalid (a refused reload): every problem of organism.yaml.',
            },
            candidates: { ...list(str()), description: 'id.ambiguous: the ids the prefix starts.' },
            thread: str('call.*: the thread of the call.'),
            failure: {
              ...nullable({ type: 'object' }),
              description:
                'call.failed, call.stopped: the failure record, SystemError or huh the thread ended with.',
            },
          },
        },
        huh: str(
          'POST /inject and /call refused for the payload (xml.*, payload.invalid, bus.routing): the <huh> a listener would get.',
        ),
      },
      ['huh'],
    ),
    // src/bus/message.ts MessageView
    Message: object({
      id: str(),
      from: str('Sender, written by the runtime.'),
      to: str(),
      kind: { type: 'string', enum: [...MESSAGE_KINDS] },
      payload: str('The payload XML as the history keeps it (known secrets masked).'),
      time: time('When it was sent.'),
    }),
    // src/bus/api.ts ThreadView
    Thread: object({
      thread: str(),
      status: THREAD_STATUS,
      created: time('When the thread started.'),
      messages: list(ref('Message')),
    }),
    // src/bus/api.ts ThreadPage
    ThreadPage: object({
      threads: list(
        object({
          thread: str(),
          status: THREAD_STATUS,
          created: time('When the thread started.'),
          updated: time('Its last activity.'),
          messages: int('Messages kept.'),
          dropped: int('Messages the per-thread bound let go.'),
          participants: list(str()),
        }),
      ),
      total: int('Threads matching the filters, all pages.'),
      next: cursor,
    }),
    // src/bus/api.ts MessagePage
    MessagePage: object({
      messages: list({ allOf: [ref('Message'), object({ thread: str() })] }),
      next: cursor,
    }),
    // src/bus/api.ts InjectRequest, as ingress.ts reads it
    InjectRequest: {
      ...object(
        {
          payload: str('The payload XML; its root tag routes it unless `to` names the listener.'),
          to: str('The listener to send it to.'),
          thread: str('Continue this thread (its id, or a unique prefix of 8+ characters).'),
          scope: {
            ...list({ type: 'string', enum: [...CAPABILITIES] }),
            description: 'Capabilities tools may use in the thread; never widens what listeners have.',
          },
        },
        ['to', 'thread', 'scope'],
      ),
    },
    CallRequest: {
      allOf: [
        ref('InjectRequest'),
        object(
          {
            timeout_ms: {
              type: 'integer',
              minimum: 1,
              maximum: 300_000,
              default: 30_000,
              description: 'How long to wait for the reply.',
            },
          },
          ['timeout_ms'],
        ),
      ],
    },
    // src/bus/api.ts InjectResult
    InjectResult: object({ thread: str(), message: str('The injected message id.') }),
    // routes/call.ts answer()
    CallResult: object({
      thread: str(),
      status: {
        type: 'string',
        enum: ['replied', 'ended'],
        description: 'ended: the thread ended without a reply and without a failure.',
      },
      reply: nullable(
        object({
          tag: nullable(str("The reply's root tag.")),
          payload: nullable({ type: 'object', description: "Decoded by the listener's response schema." }),
          xml: str(),
        }),
      ),
    }),
    // src/tools/types.ts ToolResult
    ToolResult: {
      type: 'object',
      required: ['status', 'tool'],
      properties: {
        status: { type: 'string', enum: ['ok', 'refused', 'error'] },
        tool: str(),
        value: { description: "status ok: the tool's result (JSON text when truncated)." },
        warnings: list(str()),
        truncated: object({ original_bytes: int() }),
        error: object({ code: str(), message: str(), rule_id: str(), suggestion: str() }, [
          'rule_id',
          'suggestion',
        ]),
      },
    },
    ToolCallRequest: {
      type: 'object',
      required: ['as'],
      additionalProperties: false,
      properties: {
        as: str('The listener (or the mcp: identity) whose grants, tool_config and trust apply.'),
        args: { type: 'object', description: "The tool's arguments." },
        scope: list({ type: 'string', enum: [...CAPABILITIES] }),
      },
    },
    ToolCallResult: object({ thread: str(), listener: str(), tool: str(), result: ref('ToolResult') }),
    // src/server/service.ts ToolInfo
    Tool: object(
      {
        tool: str(),
        description: str(),
        capability: str(),
        read_only: { type: 'boolean' },
        guard: nullable(str()),
        available: { type: 'boolean', description: 'With `as`: whether that listener can use it now.' },
        reason: str('With `as` and not available: why.'),
      },
      ['available', 'reason'],
    ),
    // src/bus/api.ts ListenerInfo + ListenerState
    Listener: object({
      name: str(),
      description: str(),
      tag: str('Root tag of the payloads it takes.'),
      agent: { type: 'boolean' },
      peers: list(str()),
      broadcast: { type: 'boolean' },
      tools: list(str()),
      state: nullable(listenerState),
    }),
    PauseResult: object({
      listener: str(),
      state: nullable(listenerState),
    }),
    // src/tools/approval/types.ts Approval
    Approval: object({
      id: str(),
      state: { type: 'string', enum: ['pending', 'approved', 'denied', 'timed_out'] },
      thread: str(),
      listener: str(),
      tool: str(),
      call_id: str(),
      args: { description: "The arguments as they run; only values of the daemon's own secrets masked." },
      args_sha256: str('Hex SHA-256 of the canonical JSON of the arguments as they run.'),
      verdict: { enum: ['allow', 'warn', 'deny', null] },
      rule_id: nullable(str()),
      why: str('Why the call needs approval.'),
      role: { type: 'string', enum: ['operator', 'admin'], description: 'Role needed to decide.' },
      requested: time('When the call asked.'),
      expires: time('When it times out undecided.'),
      decided_by: nullable(str()),
      decided_at: nullable(str()),
      reason: nullable(str()),
    }),
    // src/server/service.ts OrganismInfo
    Organism: object({
      name: str(),
      description: nullable(str()),
      version: str(),
      pid: int(),
      started: time('When the daemon started.'),
      uptime_seconds: { type: 'number' },
      config_file: str(),
      listeners: int(),
      threads: object({ live: int(), in_history: int() }),
      messages: object({ in_flight: int(), recorded: int() }),
      memory: object({ rss_bytes: int(), heap_used_bytes: int() }),
      auth: object({
        enabled: { type: 'boolean' },
        local_token: { type: 'boolean' },
        tokens: list(object({ name: str(), role: ROLE })),
      }),
      history: object({
        persisted: { type: 'boolean' },
        dir: nullable(str()),
        pending_lines: int(),
        bytes: int(),
      }),
      reloads: object({ applied: int(), refused: int(), last: nullable(str()) }),
      stream_clients: int(),
    }),
    // src/server/service.ts ReloadReport
    ReloadReport: object({
      status: { const: 'reloaded' },
      by: str(),
      time: time('When it was applied.'),
      added: list(str()),
      removed: list(str()),
      replaced: list(str()),
      unchanged: list(str()),
      restart_required: { ...list(str()), description: 'Settings that take effect only after a restart.' },
    }),
    // src/server/service.ts KillReport
    KillReport: object({ thread: str(), status: THREAD_STATUS, dropped: int(), aborted: int() }),
    // src/server/service.ts DeadLetterPage
    DeadLetterPage: object({
      dead_letters: list(
        object({
          id: str(),
          time: time('When it was moved to the dead letters.'),
          listener: str(),
          message: nullable(str()),
          thread: nullable(str()),
          from: nullable(str()),
          tag: nullable(str()),
          deliveries: int(),
          reason: str(),
          consumer: str(),
        }),
      ),
      total: int(),
      next: cursor,
    }),
    // src/server/audit-query.ts AuditPage
    AuditPage: object({
      records: list({ type: 'object', description: 'One audit record as the log holds it.' }),
      next: cursor,
    }),
    // routes/session.ts
    Session: object({
      name: str("The token's name."),
      role: ROLE,
      organism: str(),
      auth: { type: 'boolean' },
      can: object({
        inject: { type: 'boolean' },
        approve: { type: 'boolean' },
        pause: { type: 'boolean' },
        kill: { type: 'boolean' },
        reload: { type: 'boolean' },
      }),
    }),
    // routes/series.ts
    Series: object({
      interval_ms: int(),
      points: list(
        object({
          time: time('End of the interval.'),
          messages_per_second: { type: 'number' },
          hop_latency_ms: nullable({
            type: 'number',
            description: 'Mean over the interval, waits included.',
          }),
          hop_p50_ms: nullable({
            type: 'number',
            description: 'Median hop over the interval, less any time its calls waited for a person.',
          }),
          hop_p95_ms: nullable({
            type: 'number',
            description:
              '95th percentile hop over the interval, less any time its calls waited for a person.',
          }),
        }),
      ),
    }),
    // A JSON-RPC 2.0 message (MCP's Streamable HTTP transport carries them).
    JsonRpc: {
      type: 'object',
      required: ['jsonrpc'],
      properties: { jsonrpc: { const: '2.0' } },
    },
  };
}
