/** GET /organism, GET /organism/config, POST /organism/reload, GET /metrics. */
import { ConfigError } from '../../errors.ts';
import { renderMetrics } from '../../observability/metrics.ts';
import { type ApiApp, allow, failWith, type RouteDeps } from './common.ts';

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
}
