/** GET /audit (paginated, filtered) and GET /tools?as=<listener>. */
import { suggestion } from '../../config/suggest.ts';
import { queryAudit } from '../audit-query.ts';
import { httpError } from '../errors.ts';
import { threadFilter } from '../id-prefix.ts';
import {
  type ApiApp,
  allow,
  enumParam,
  fail,
  limitParam,
  QueryError,
  type RouteDeps,
  stringParam,
  withQuery,
} from './common.ts';

export function auditAndToolRoutes(app: ApiApp, { service }: RouteDeps): void {
  app.get('/api/v1/audit', (c) => {
    allow(c, 'viewer', 'reading the audit log');
    return withQuery(
      c,
      (): Parameters<typeof queryAudit>[1] => {
        const cursor = stringParam(c, 'cursor');
        if (cursor !== undefined && !/^\d+$/.test(cursor))
          throw new QueryError(`cursor must come from an earlier page's next`);
        return {
          verdict: enumParam(c, 'verdict', ['allow', 'warn', 'deny', 'none'] as const),
          tool: stringParam(c, 'tool'),
          listener: stringParam(c, 'listener'),
          thread: threadFilter(service.bus, stringParam(c, 'thread')),
          type: enumParam(c, 'type', ['call', 'threat', 'change', 'approval'] as const),
          limit: limitParam(c),
          ...(cursor !== undefined ? { cursor: Number(cursor) } : {}),
        };
      },
      async (query) => c.json(await queryAudit(await service.auditFile(), query)),
    );
  });

  app.get('/api/v1/tools', (c) => {
    allow(c, 'viewer', 'reading tools');
    const as = c.req.query('as') || undefined;
    const tools = service.tools(as);
    if (!tools) {
      const names = service.bus.listeners().map((l) => l.name);
      return fail(
        c,
        httpError(404, 'listener.not_found', `no listener named '${as}'${suggestion(as ?? '', names)}`),
      );
    }
    return c.json(as ? { as, tools } : { tools });
  });
}
