/**
 * POST /inject: puts a payload on the bus and answers 202 with the thread and message ids. The
 * checks, in their order, are ingress.ts's (shared with POST /call).
 */

import type { ApiApp, RouteDeps } from './common.ts';
import { admitInjection, counted, injectAdmitted } from './ingress.ts';

export function injectRoutes(app: ApiApp, deps: RouteDeps): void {
  app.post('/api/v1/inject', (c) =>
    counted(c, async () => {
      const admitted = await admitInjection(c, deps, 'injecting a message');
      if (admitted instanceof Response) return admitted;
      const result = await injectAdmitted(c, deps, admitted);
      if (result instanceof Response) return result;
      deps.logger.debug(
        { thread: result.thread, by: admitted.principal.name, to: admitted.request.to },
        'injected',
      );
      return c.json(result, 202);
    }),
  );
}
