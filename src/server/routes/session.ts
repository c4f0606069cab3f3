/**
 * GET /session: who the caller's token is and what it may do, so a client (the dashboard) shows
 * only the actions its role allows. The API checks the role on every action anyway.
 */
import { hasRole } from '../auth.ts';
import type { ApiApp, RouteDeps } from './common.ts';

export function sessionRoutes(app: ApiApp, { service }: RouteDeps): void {
  app.get('/api/v1/session', (c) => {
    const principal = c.get('principal');
    const info = service.info();
    return c.json({
      name: principal.name,
      role: principal.role,
      organism: info.name,
      // A credential was needed to get here (tokens or the local token): the page offers Sign out.
      auth: info.auth.enabled || info.auth.local_token,
      can: {
        inject: hasRole(principal, 'operator'),
        approve: hasRole(principal, 'operator'),
        pause: hasRole(principal, 'admin'),
        kill: hasRole(principal, 'admin'),
        reload: hasRole(principal, 'admin'),
      },
    });
  });
}
