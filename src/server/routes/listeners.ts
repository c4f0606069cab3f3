/** GET /listeners[/:name[/schema|/example|/prompt]], POST /listeners/:name/pause|resume. */

import { suggestion } from '../../config/suggest.ts';
import { httpError } from '../errors.ts';
import { type ApiApp, allow, fail, type RouteDeps } from './common.ts';

export function listenerRoutes(app: ApiApp, { service, logger }: RouteDeps): void {
  const { bus } = service;
  const notFound = (name: string) =>
    httpError(
      404,
      'listener.not_found',
      `no listener named '${name}'${suggestion(
        name,
        bus.listeners().map((l) => l.name),
      )}`,
    );

  app.get('/api/v1/listeners', (c) => {
    allow(c, 'viewer', 'reading listeners');
    return c.json({
      listeners: bus.listeners().map((l) => ({ ...l, state: bus.listenerState(l.name) ?? null })),
    });
  });

  app.get('/api/v1/listeners/:name', (c) => {
    allow(c, 'viewer', 'reading listeners');
    const name = c.req.param('name');
    const info = bus.listeners().find((l) => l.name === name);
    if (!info) return fail(c, notFound(name));
    return c.json({ ...info, state: bus.listenerState(name) ?? null });
  });

  for (const part of ['schema', 'example', 'prompt'] as const) {
    app.get(`/api/v1/listeners/:name/${part}`, async (c) => {
      allow(c, 'viewer', 'reading listeners');
      const name = c.req.param('name');
      const described = await bus.describe(name);
      if (!described) return fail(c, notFound(name));
      const value =
        part === 'schema' ? described.xsd : part === 'example' ? described.example : described.prompt;
      const key = part === 'schema' ? 'xsd' : part;
      return c.json({ listener: name, [key]: value });
    });
  }

  for (const action of ['pause', 'resume'] as const) {
    app.post(`/api/v1/listeners/:name/${action}`, (c) => {
      const by = allow(c, 'admin', `${action === 'pause' ? 'pausing' : 'resuming'} a listener`).name;
      const name = c.req.param('name');
      const done = action === 'pause' ? service.pause(name, by) : service.resume(name, by);
      if (!done) return fail(c, notFound(name));
      logger.info({ listener: name, by }, action === 'pause' ? 'listener paused' : 'listener resumed');
      return c.json({ listener: name, state: bus.listenerState(name) ?? null });
    });
  }
}
