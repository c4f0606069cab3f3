/**
 * POST /inject: operator role, then the caller's rate limit (429), then admission (503 while the
 * daemon is behind), then the body (size-capped), then the bus (503 when the target queue is full).
 * Every answer is counted by status in organism_injects_total.
 */

import { type HuhReason, huhXml } from '../../bus/system.ts';
import { PayloadValidationError, RoutingError, ServerError, XmlError } from '../../errors.ts';
import { metrics } from '../../observability/metrics.ts';
import { CAPABILITIES, type Capability } from '../../tools/types.ts';
import { readJsonBody } from '../body.ts';
import { httpError, toHttpError } from '../errors.ts';
import { LARGE_BODY_BYTES, largeBodyTurn } from '../turns.ts';
import { type ApiApp, allow, fail, failWith, type RouteDeps } from './common.ts';

export function injectRoutes(app: ApiApp, { service, logger, maxBodyBytes, injectLimiter }: RouteDeps): void {
  app.post('/api/v1/inject', async (c) => {
    // A refusal thrown before the bus (403, 429) is counted like any other answer.
    const response = await inject().catch((error: unknown) => failWith(c, error));
    metrics.injects.inc({ status: String(response.status) });
    return response;

    async function inject(): Promise<Response> {
      const principal = allow(c, 'operator', 'injecting a message');
      // Keyed by token name (every caller has one: the API is never open).
      const key = `token:${principal.name}`;
      const decision = injectLimiter().take(key);
      if (!decision.ok) {
        return fail(
          c,
          toHttpError(
            new ServerError(
              'server.rate_limited',
              `too many injections from ${principal.name}; retry later`,
              {
                retryAfterSeconds: decision.retryAfterSeconds,
              },
            ),
          ),
        );
      }
      const refusal = service.admission();
      if (refusal) return fail(c, toHttpError(refusal));
      const body = await readJsonBody(c, maxBodyBytes);
      if ('status' in body) return fail(c, body);
      if (typeof body.value !== 'object' || body.value === null || Array.isArray(body.value))
        return fail(
          c,
          httpError(400, 'request.invalid', 'send a JSON object {"to"?, "payload", "thread"?, "scope"?}'),
        );
      const { to, payload, thread, scope } = body.value as Record<string, unknown>;
      if (typeof payload !== 'string')
        return fail(c, httpError(400, 'request.invalid', '`payload` must be a string of XML'));
      if (to !== undefined && typeof to !== 'string')
        return fail(c, httpError(400, 'request.invalid', '`to` must be a string'));
      if (thread !== undefined && typeof thread !== 'string')
        return fail(c, httpError(400, 'request.invalid', '`thread` must be a string'));
      if (
        scope !== undefined &&
        (!Array.isArray(scope) || scope.some((c) => !(CAPABILITIES as readonly unknown[]).includes(c)))
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
      try {
        // The XML parse of a large payload takes a turn of its own, after its body's (turns.ts).
        if (payload.length > LARGE_BODY_BYTES) await largeBodyTurn();
        const result = await service.bus.inject({
          to,
          payload,
          thread,
          from: 'api',
          ...(scope ? { scope: scope as Capability[] } : {}),
          // W3C Trace Context: with tracing on, the thread's first hops join the caller's trace.
          ...(c.req.header('traceparent') ? { traceparent: c.req.header('traceparent') } : {}),
        });
        logger.debug({ thread: result.thread, by: principal.name, to }, 'injected');
        return c.json(result, 202);
      } catch (error) {
        const mapped = toHttpError(error);
        if (mapped.status >= 500 && mapped.status !== 503) logger.error({ err: error }, 'inject failed');
        // Input that does not parse, validate or route also gets the <huh> a listener would get.
        const reason = huhReason(error);
        if (reason)
          return c.json(
            { ...mapped.body, huh: huhXml(reason, payload) },
            mapped.status as 400,
            mapped.headers,
          );
        return fail(c, mapped);
      }
    }
  });
}

function huhReason(error: unknown): HuhReason | undefined {
  if (error instanceof XmlError) return 'parse';
  if (error instanceof PayloadValidationError) return 'validate';
  if (error instanceof RoutingError) return 'route';
  return undefined;
}
