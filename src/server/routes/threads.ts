/** GET /threads, GET /threads/:id, GET /threads/:id/follow, POST /threads/:id/kill, GET /messages. */
import type { BusApi } from '../../bus/api.ts';
import { MESSAGE_KINDS, type MessageKind, type MessageView } from '../../bus/message.ts';
import { httpError } from '../errors.ts';
import { resolveThreadId, threadFilter, threadNotFound } from '../id-prefix.ts';
import {
  type ApiApp,
  allow,
  enumParam,
  fail,
  limitParam,
  type RouteDeps,
  stringParam,
  timeParam,
  withQuery,
} from './common.ts';

const STATUSES = ['active', 'idle', 'stopped'] as const;
const KINDS: readonly MessageKind[] = MESSAGE_KINDS;

export function threadRoutes(app: ApiApp, { service, logger }: RouteDeps): void {
  const { bus } = service;
  const notFound = (id: string) => httpError(404, 'thread.not_found', threadNotFound(id));

  app.get('/api/v1/threads', (c) => {
    allow(c, 'viewer', 'reading threads');
    return withQuery(
      c,
      () => ({
        status: enumParam(c, 'status', STATUSES),
        listener: stringParam(c, 'listener'),
        since: timeParam(c, 'since'),
        limit: limitParam(c),
        cursor: stringParam(c, 'cursor'),
      }),
      (query) => c.json(bus.listThreads(query)),
    );
  });

  app.get('/api/v1/threads/:id', async (c) => {
    allow(c, 'viewer', 'reading threads');
    // A unique prefix of 8+ characters stands for the whole id (id-prefix.ts).
    const id = resolveThreadId(bus, c.req.param('id'));
    // Several daemons (redis transport): brought up to date with what the others did.
    await bus.loadThread?.(id);
    const view = bus.thread(id);
    if (!view) return fail(c, notFound(id));
    return c.json(view);
  });

  // Newline-delimited JSON: the thread's messages so far, then live ones, then `{"idle": true}`.
  app.get('/api/v1/threads/:id/follow', async (c) => {
    allow(c, 'viewer', 'reading threads');
    const id = resolveThreadId(bus, c.req.param('id'));
    await bus.loadThread?.(id);
    const view = bus.thread(id);
    if (!view) return fail(c, notFound(id));
    return followStream(bus, id, view.messages, view.status !== 'active');
  });

  app.post('/api/v1/threads/:id/kill', (c) => {
    const by = allow(c, 'admin', 'killing a thread').name;
    const id = resolveThreadId(bus, c.req.param('id'));
    const report = service.kill(id, by);
    if (!report) return fail(c, notFound(id));
    logger.info(
      { thread: id, by, dropped: report.dropped, aborted: report.aborted },
      'thread kill requested',
    );
    return c.json(report);
  });

  app.get('/api/v1/messages', (c) => {
    allow(c, 'viewer', 'reading messages');
    return withQuery(
      c,
      () => ({
        thread: threadFilter(bus, stringParam(c, 'thread')),
        listener: stringParam(c, 'listener'),
        kind: enumParam(c, 'kind', KINDS),
        since: timeParam(c, 'since'),
        limit: limitParam(c),
        cursor: stringParam(c, 'cursor'),
      }),
      (query) => c.json(bus.listMessages(query)),
    );
  });
}

function followStream(bus: BusApi, thread: string, initial: MessageView[], idleNow: boolean): Response {
  const encoder = new TextEncoder();
  let unwatch: (() => void) | undefined;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      const line = (value: unknown) => controller.enqueue(encoder.encode(`${JSON.stringify(value)}\n`));
      const seen = new Set<string>();
      for (const m of initial) {
        seen.add(m.id);
        line(m);
      }
      const finish = () => {
        unwatch?.();
        line({ idle: true });
        controller.close();
      };
      if (idleNow) return finish();
      unwatch = bus.watch(thread, {
        onMessage: (m) => {
          if (!seen.has(m.id)) line(m);
        },
        onIdle: finish,
      });
    },
    cancel() {
      unwatch?.();
    },
  });
  return new Response(stream, { headers: { 'content-type': 'application/x-ndjson' } });
}
