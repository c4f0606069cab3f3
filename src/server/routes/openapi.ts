/**
 * GET /openapi.json: the API's OpenAPI 3.1 document (src/server/openapi). Any token (viewer): it
 * describes the code, not the organism (no names, no state, nothing a token holder could not read
 * in docs/reference/http-api.json), but it is an API route like the others, and every API route
 * needs a credential (issue 25), so no exception list grows. Built at the first request (its
 * modules are loaded then, not at start) and kept: the routes do not change while the app runs.
 */
import { type ApiApp, allow, type RouteDeps } from './common.ts';

export function openApiRoutes(app: ApiApp, { service }: RouteDeps, options: { dashboard: boolean }): void {
  let body: string | undefined;
  app.get('/api/v1/openapi.json', async (c) => {
    allow(c, 'viewer', 'reading the API document');
    if (body === undefined) {
      const { openApiDocument } = await import('../openapi/document.ts');
      body = JSON.stringify(
        openApiDocument({ version: service.info().version, dashboard: options.dashboard }),
      );
    }
    return c.body(body, 200, { 'content-type': 'application/json; charset=utf-8' });
  });
}
