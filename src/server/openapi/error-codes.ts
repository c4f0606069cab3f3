/**
 * The `error.code`s the HTTP API answers with, each with its status and when it comes. The codes
 * raised as OrganismErrors (src/errors.ts) get their status from toHttpError itself, the one mapping
 * every route uses, so the document cannot say another status than the daemon gives; a class whose
 * codes are a closed union lists them all (the compiler says when one is missing). The codes the
 * routes answer with directly (httpError(...) in src/server) are listed by hand, and a test reads
 * src/server for every such code and status and fails on one missing here
 * (test/server/openapi.test.ts).
 */
import {
  AmbiguousIdError,
  ApprovalError,
  AuthError,
  BusyError,
  CallError,
  ConfigError,
  OrganismError,
  PayloadValidationError,
  ReloadError,
  RoutingError,
  ServerError,
  ShuttingDownError,
  ThreadNotFoundError,
  TransportError,
  XmlError,
  type XmlErrorCode,
} from '../../errors.ts';
import { toHttpError } from '../errors.ts';

export interface HttpErrorCode {
  code: string;
  status: number;
  when: string;
}

type CodeOf<E extends abstract new (...args: never[]) => OrganismError> = InstanceType<E>['code'];

/** Records keyed by a class's whole code union: the compiler refuses one that misses a code. */
const XML: Record<XmlErrorCode, string> = {
  'xml.malformed': 'The payload is not well-formed XML.',
  'xml.too_large': 'The payload is over the XML size limit.',
  'xml.too_deep': 'The payload nests deeper than the limit.',
  'xml.too_many_attributes': 'An element has more attributes than the limit.',
  'xml.too_many_elements': 'The payload has more elements than the limit.',
  'xml.text_too_long': 'A text node is over the limit.',
  'xml.doctype': 'The payload has a DOCTYPE or entity declaration (refused).',
  'xml.encoding': 'The body is not valid UTF-8.',
  'xml.empty': 'The payload is empty.',
  'xml.multiple_roots': 'The payload has more than one root element.',
  'xml.envelope': 'The payload is an envelope or misuses its namespace.',
  'xml.unencodable': 'The payload holds characters XML cannot carry.',
};
const AUTH: Record<CodeOf<typeof AuthError>, string> = {
  'auth.required': 'No `Authorization: Bearer` header.',
  'auth.invalid': 'The bearer token is not one the daemon knows.',
  'auth.forbidden': "The token's role is below what the action needs.",
};
const CALL: Record<CodeOf<typeof CallError>, string> = {
  'call.failed': 'The thread failed before the reply; `failure` shows what the thread recorded.',
  'call.stopped': 'The thread was killed or ran out of budget before the reply.',
  'call.timeout': 'No reply within timeout_ms; the thread goes on.',
};
const RELOAD: Record<CodeOf<typeof ReloadError>, string> = {
  'reload.in_progress': 'Another reload is being applied.',
  'reload.failed': 'The reload could not be applied; the organism runs unchanged.',
};

/** Errors the routes let through to toHttpError, with when each comes. */
function thrown(): Array<[OrganismError, string]> {
  const each = <C extends string>(
    make: (code: C) => OrganismError,
    whens: Record<C, string>,
  ): Array<[OrganismError, string]> =>
    (Object.entries(whens) as Array<[C, string]>).map(([code, when]) => [make(code), when]);
  return [
    ...each((code) => new XmlError(code, ''), XML),
    ...each((code) => new AuthError(code, ''), AUTH),
    ...each((code) => new CallError(code, ''), CALL),
    ...each((code) => new ReloadError(code, ''), RELOAD),
    [
      new PayloadValidationError(''),
      "The payload does not match the listener's schema; `fields` lists each problem.",
    ],
    [
      new RoutingError(),
      'No listener takes the payload, or the caller may not address it (deliberately generic).',
    ],
    [new BusyError(''), "The target listener's queue is full; retry after Retry-After."],
    [new ShuttingDownError(), 'The daemon is shutting down.'],
    [new ThreadNotFoundError(''), 'No thread with that id (or unique prefix).'],
    [
      new OrganismError('thread.stopped', ''),
      'The thread to continue was stopped (killed or out of budget).',
    ],
    [new AmbiguousIdError('thread', '', []), 'The id prefix starts several ids; `candidates` lists them.'],
    [new ServerError('server.rate_limited', ''), "Over the token's inject rate; retry after Retry-After."],
    [
      new ServerError('server.overloaded', ''),
      'The daemon is behind (history writer); retry after Retry-After.',
    ],
    [
      new ConfigError([]),
      'A reload found problems in organism.yaml; `issues` lists them. The organism runs unchanged.',
    ],
    [new ApprovalError('approval.not_found', ''), 'No approval with that id.'],
    [new ApprovalError('approval.decided', ''), 'The approval was decided already (or timed out).'],
    [new ApprovalError('approval.forbidden', ''), "The listener's tool_config asks a higher role to decide."],
    [new TransportError('transport.invalid_option', ''), 'A dead-letters cursor the transport cannot read.'],
  ];
}

/** Codes the routes, the middleware and the stream's upgrade answer with directly (src/server). */
const DIRECT: readonly HttpErrorCode[] = [
  {
    code: 'request.invalid',
    status: 400,
    when: 'The JSON body has the wrong shape; the message shows the expected one.',
  },
  { code: 'request.invalid_json', status: 400, when: 'The body is not JSON.' },
  { code: 'request.query', status: 400, when: 'A query parameter is out of range or not one of its values.' },
  {
    code: 'request.cross_origin',
    status: 403,
    when: 'A browser request from another site, or a non-loopback Host on a loopback daemon.',
  },
  { code: 'request.not_found', status: 404, when: 'No such route (or MCP is not served).' },
  { code: 'listener.not_found', status: 404, when: 'No listener with that name.' },
  { code: 'thread.not_found', status: 404, when: 'No thread with that id (or unique prefix).' },
  { code: 'approval.not_found', status: 404, when: 'No approval with that id.' },
  { code: 'request.method', status: 405, when: 'The route does not take this method.' },
  { code: 'request.too_large', status: 413, when: 'The body is over server.max_body_bytes.' },
  { code: 'request.content_type', status: 415, when: 'The body is not sent as application/json.' },
  {
    code: 'stream.full',
    status: 503,
    when: 'The stream has as many clients as it takes; retry after Retry-After.',
  },
  {
    code: 'server.internal',
    status: 500,
    when: 'An unexpected failure; the daemon logs it, the answer says nothing more.',
  },
];

let cache: readonly HttpErrorCode[] | undefined;

/** Every code, one entry each, by status then code. */
export function httpErrorCodes(): readonly HttpErrorCode[] {
  if (cache) return cache;
  const byCode = new Map<string, HttpErrorCode>();
  for (const [error, when] of thrown()) {
    byCode.set(error.code, { code: error.code, status: toHttpError(error).status, when });
  }
  for (const entry of DIRECT) if (!byCode.has(entry.code)) byCode.set(entry.code, entry);
  cache = [...byCode.values()].sort((a, b) => a.status - b.status || a.code.localeCompare(b.code));
  return cache;
}

/** The codes answered with `status`. */
export function codesFor(status: number): string[] {
  return httpErrorCodes()
    .filter((entry) => entry.status === status)
    .map((entry) => entry.code);
}
