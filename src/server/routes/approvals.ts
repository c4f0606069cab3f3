/**
 * GET /approvals[?thread=&listener=] and /approvals/:id (viewer), POST /approvals/:id/approve|deny with an optional JSON body
 * {"reason": "..."} (operator at least; admin where the listener's tool_config says
 * `approval_role: admin`). README "Approval".
 */
import { MAX_REASON_CHARS } from '../../tools/approval/gate.ts';
import { hasRole } from '../auth.ts';
import { readJsonBody } from '../body.ts';
import { httpError } from '../errors.ts';
import { MIN_ID_PREFIX, pickByPrefix, threadFilter } from '../id-prefix.ts';
import type { OrganismService } from '../service.ts';
import {
  type ApiApp,
  type ApiContext,
  allow,
  fail,
  type RouteDeps,
  stringParam,
  withQuery,
} from './common.ts';

export function approvalRoutes(app: ApiApp, { service, logger, maxBodyBytes }: RouteDeps): void {
  app.get('/api/v1/approvals', (c) => {
    allow(c, 'viewer', 'reading approvals');
    return withQuery(
      c,
      () => ({
        thread: threadFilter(service.bus, stringParam(c, 'thread')),
        listener: stringParam(c, 'listener'),
      }),
      async ({ thread, listener }) => {
        const approvals = (await service.approvals.list()).filter(
          (a) =>
            (thread === undefined || a.thread === thread) &&
            (listener === undefined || a.listener === listener),
        );
        return c.json({ approvals });
      },
    );
  });

  app.get('/api/v1/approvals/:id', async (c) => {
    allow(c, 'viewer', 'reading approvals');
    const id = await approvalId(service, c.req.param('id'));
    const approval = await service.approvals.get(id);
    if (!approval) return fail(c, httpError(404, 'approval.not_found', `no approval with id '${id}'`));
    return c.json(approval);
  });

  for (const action of ['approve', 'deny'] as const) {
    app.post(`/api/v1/approvals/:id/${action}`, async (c) => {
      const principal = allow(c, 'operator', action === 'approve' ? 'approving a call' : 'denying a call');
      const reason = await readReason(c, maxBodyBytes);
      if (typeof reason === 'object' && reason !== null) return fail(c, reason);
      const id = await approvalId(service, c.req.param('id'));
      const decided = await service.approvals.decide(
        id,
        action === 'approve' ? 'approved' : 'denied',
        principal.name,
        reason,
        (role) => hasRole(principal, role),
      );
      logger.info(
        { approval: id, tool: decided.tool, thread: decided.thread, by: principal.name },
        action === 'approve' ? 'tool call approved' : 'tool call denied',
      );
      return c.json(decided);
    });
  }
}

/**
 * The approval id `given` stands for: a prefix of 8+ characters (`ap_` counted, as the dashboard
 * shows it) resolves among the approvals waiting now; a decided one is named by its whole id.
 */
async function approvalId(service: OrganismService, given: string): Promise<string> {
  if (given.length < MIN_ID_PREFIX || /^ap_[0-9a-f]{24}$/.test(given)) return given;
  const waiting = (await service.approvals.list()).map((a) => a.id);
  return pickByPrefix('approval', given, waiting);
}

/** The body's `reason` (null with no body), or the answer to give instead. */
async function readReason(c: ApiContext, maxBytes: number) {
  const length = c.req.header('content-length');
  if (c.req.header('content-type') === undefined && (length === undefined || length === '0')) return null;
  const body = await readJsonBody(c, maxBytes);
  if ('status' in body) return body;
  const value = body.value;
  if (value === null || (typeof value === 'object' && !Array.isArray(value))) {
    const reason = (value as { reason?: unknown } | null)?.reason;
    if (reason === undefined || reason === null) return null;
    if (typeof reason === 'string' && reason.length <= MAX_REASON_CHARS) return reason;
  }
  return httpError(
    400,
    'request.invalid',
    `send a JSON object {"reason"?: string of at most ${MAX_REASON_CHARS} characters}`,
  );
}
