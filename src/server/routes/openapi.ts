/**
 * GET /openapi.json: the API's OpenAPI 3.1 document (src/server/openapi). Any token (viewer): it
 * describes the code, not the organism (no names, no state, nothing a token holder could not read
 * in docs/reference/http-api.json), but it is an API route like the others, and every API route
 * needs a credential (issue 25), so no exception list grows. Built once per app: the routes do not
 * change while it runs.
 */
import { openApiDocument } from '../openapi/document.ts';
import { type ApiApp, allow, type RouteDeps } from './common.ts';

export function openApiRoutes(app: ApiApp, { service }: RouteDeps, options: { dashboard: boolean }): void {
  let body: string | undefined;
  app.get('/api/v1/openapi.json', (c) => {
    allow(c, 'viewer', 'reading the API document');
    body ??= JSON.stringify(
      openApiDocument({ version: service.info().version, dashboard: options.dashboard }),
    );
    return c.body(body, 200, { 'content-type': 'application/json; charset=utf-8' });
  });
}
