/**
 * What POST /inject and POST /call share, in one order: operator role, then the caller's rate
 * limit (429), then admission (503 while the daemon is behind), then the body (size-capped) and
 * its fields, then the bus (413/400/422/404 for the payload, 503 when the target queue is full).
 * Every answer of either route is counted by status in organism_injects_total.
 */
import type { InjectRequest, InjectResult } from '../../bus/api.ts';
import { type HuhReason, huhXml } from '../../bus/system.ts';
import { PayloadValidationError, RoutingError, ServerError, XmlError } from '../../errors.ts';
import { metrics } from '../../observability/metrics.ts';
import { CAPABILITIES, type Capability } from '../../tools/types.ts';
import type { Principal } from '../auth.ts';
import { readJsonBody } from '../body.ts';
import { httpError, toHttpError } from '../errors.ts';
import { resolveThreadId } from '../id-prefix.ts';
import { LARGE_BODY_BYTES, largeBodyTurn } from '../turns.ts';
import { type ApiContext, allow, fail, failWith, type RouteDeps } from './common.ts';

/** An injection the caller may make, as its body asked for it, with the body's other fields. */
export interface AdmittedInjection {
  principal: Principal;
  request: InjectRequest;
  body: Record<string, unknown>;
}

const SHAPE = '{"to"?, "payload", "thread"?, "scope"?}';

/**
 * Checks and reads one injection in the order above; a Response is the refusal to answer.
 * `fields` names the body's own extra fields for the 400 that shows the expected shape.
 */
export async function admitInjection(
  c: ApiContext,
  { service, maxBodyBytes, injectLimiter }: RouteDeps,
  action: string,
  fields = '',
): Promise<AdmittedInjection | Response> {
  const principal = allow(c, 'operator', action);
  // Keyed by token name (every caller has one: the API is never open).
  const decision = injectLimiter().take(`token:${principal.name}`);
  if (!decision.ok) {
    return fail(
      c,
      toHttpError(
        new ServerError('server.rate_limited', `too many injections from ${principal.name}; retry later`, {
          retryAfterSeconds: decision.retryAfterSeconds,
        }),
      ),
    );
  }
  const refusal = service.admission();
  if (refusal) return fail(c, toHttpError(refusal));
  const read = await readJsonBody(c, maxBodyBytes);
  if ('status' in read) return fail(c, read);
  const shape = fields === '' ? SHAPE : `${SHAPE.slice(0, -1)}, ${fields}}`;
  if (typeof read.value !== 'object' || read.value === null || Array.isArray(read.value))
    return fail(c, httpError(400, 'request.invalid', `send a JSON object ${shape}`));
  const body = read.value as Record<string, unknown>;
  const { to, payload, thread, scope } = body;
  if (typeof payload !== 'string')
    return fail(c, httpError(400, 'request.invalid', '`payload` must be a string of XML'));
  if (to !== undefined && typeof to !== 'string')
    return fail(c, httpError(400, 'request.invalid', '`to` must be a string'));
  if (thread !== undefined && typeof thread !== 'string')
    return fail(c, httpError(400, 'request.invalid', '`thread` must be a string'));
  if (
    scope !== undefined &&
    (!Array.isArray(scope) || scope.some((s) => !(CAPABILITIES as readonly unknown[]).includes(s)))
  ) {
    return fail(
      c,
      httpError(
        400,
        'request.invalid',
        `\`scope\` must be a list of capabilities: ${CAPABILITIES.join(', ')}`,
      ),
    );
  }
  const traceparent = c.req.header('traceparent');
  return {
    principal,
    body,
    request: {
      to,
      payload,
      thread,
      from: 'api',
      ...(scope ? { scope: scope as Capability[] } : {}),
      // W3C Trace Context: with tracing on, the thread's first hops join the caller's trace.
      ...(traceparent ? { traceparent } : {}),
    },
  };
}

/**
 * Puts an admitted injection on the bus. A Response is the refusal: input that does not parse,
 * validate or route also carries the `<huh>` a listener would get.
 */
export async function injectAdmitted(
  c: ApiContext,
  { service, logger }: RouteDeps,
  { request }: AdmittedInjection,
): Promise<InjectResult | Response> {
  try {
    // The XML parse of a large payload takes a turn of its own, after its body's (turns.ts).
    if (request.payload.length > LARGE_BODY_BYTES) await largeBodyTurn();
    // A unique prefix (8+ characters) of a thread id continues that thread (id-prefix.ts).
    const thread = request.thread === undefined ? undefined : resolveThreadId(service.bus, request.thread);
    return await service.bus.inject({ ...request, thread });
  } catch (error) {
    const mapped = toHttpError(error);
    if (mapped.status >= 500 && mapped.status !== 503) logger.error({ err: error }, 'inject failed');
    const reason = huhReason(error);
    if (reason)
      return c.json(
        { ...mapped.body, huh: huhXml(reason, request.payload) },
        mapped.status as 400,
        mapped.headers,
      );
    return fail(c, mapped);
  }
}

/** Counts the answer of an inject or call route, a refusal thrown before the bus (403, 429) too. */
export async function counted(c: ApiContext, answer: () => Promise<Response>): Promise<Response> {
  const response = await answer().catch((error: unknown) => failWith(c, error));
  metrics.injects.inc({ status: String(response.status) });
  return response;
}

function huhReason(error: unknown): HuhReason | undefined {
  if (error instanceof XmlError) return 'parse';
  if (error instanceof PayloadValidationError) return 'validate';
  if (error instanceof RoutingError) return 'route';
  return undefined;
}
