/** GET /organism, GET /organism/config, POST /organism/reload, GET /metrics, GET /dead-letters. */
import { ConfigError } from '../../errors.ts';
import { renderMetrics } from '../../observability/metrics.ts';
import {
  type ApiApp,
  allow,
  failWith,
  limitParam,
  QueryError,
  type RouteDeps,
  stringParam,
  withQuery,
} from './common.ts';

export function organismRoutes(app: ApiApp, { service, logger }: RouteDeps): void {
  app.get('/api/v1/organism', (c) => {
    allow(c, 'viewer', 'reading the organism');
    return c.json(service.info());
  });

  app.get('/api/v1/organism/config', (c) => {
    allow(c, 'viewer', 'reading the configuration');
    return c.json(service.config());
  });

  app.post('/api/v1/organism/reload', async (c) => {
    const by = allow(c, 'admin', 'reloading the organism').name;
    try {
      const report = await service.reload(by);
      return c.json(report);
    } catch (error) {
      if (!(error instanceof ConfigError)) logger.error({ err: error, by }, 'reload failed');
      return failWith(c, error);
    }
  });

  app.get('/metrics', async (c) => {
    allow(c, 'viewer', 'reading metrics');
    service.sampleMetrics();
    const { contentType, body } = await renderMetrics();
    return c.body(body, 200, { 'content-type': contentType });
  });

  // Messages the bus gave up on (redis transport: after bus.max_deliveries), newest first.
  app.get('/api/v1/dead-letters', (c) => {
    allow(c, 'viewer', 'reading dead letters');
    return withQuery(
      c,
      () => {
        const cursor = stringParam(c, 'cursor');
        if (cursor !== undefined && !/^\d{1,20}-\d{1,20}$/.test(cursor)) {
          throw new QueryError(`cursor must be the 'next' of a previous page, not '${cursor}'`);
        }
        return { limit: limitParam(c), cursor };
      },
      async (query) => c.json(await service.deadLetters(query)),
    );
  });
}
