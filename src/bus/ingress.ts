/**
 * Ingress: a payload from outside the organism (HTTP API, CLI) enters the bus. It is parsed under
 * the size and depth limits, unwrapped if it is a whole envelope, routed by `to` or by its root
 * tag, validated by every target and refused early when a target is full, all before a thread is
 * started or continued, so a refused injection leaves no trace. With a journaled transport the
 * answer (the 202) waits until the accepted messages are durable.
 */

import { didYouMean, suggestion } from '../config/suggest.ts';
import {
  BusyError,
  JournalError,
  OrganismError,
  RoutingError,
  ServerError,
  ShuttingDownError,
  ThreadNotFoundError,
} from '../errors.ts';
import { decodePayload } from '../xml/codec.ts';
import { parsePayload } from '../xml/parse.ts';
import type { InjectRequest, InjectResult } from './api.ts';
import type { BusContext } from './bus-context.ts';
import type { RuntimeListener } from './listeners.ts';
import type { Publisher } from './publish.ts';
import { SYSTEM_SENDER } from './system.ts';
import type { ThreadState } from './threads.ts';
import { MemoryTransport } from './transport/memory.ts';
import { unwrapEnvelope } from './unwrap.ts';

/** Sender recorded for an injection that names none. */
const INGRESS_DEFAULT = 'api';

export class Ingress {
  constructor(
    private readonly bus: BusContext,
    private readonly publisher: Publisher,
  ) {}

  async inject(request: InjectRequest): Promise<InjectResult> {
    const bus = this.bus;
    if (bus.stopping) throw new ShuttingDownError();
    const from = request.from ?? INGRESS_DEFAULT;
    if (bus.listeners.has(from) || from === SYSTEM_SENDER) {
      throw new OrganismError(
        'ingress.from',
        `'${from}' is reserved and cannot be used as the sender of an injection`,
      );
    }
    let parsed = parsePayload(request.payload, bus.xmlLimits);
    let to = request.to;
    const unwrapped = unwrapEnvelope(parsed.xml, parsed.tag, parsed.node.ns, bus.xmlLimits);
    if (unwrapped) {
      parsed = parsePayload(unwrapped.payloadXml, bus.xmlLimits);
      to ??= unwrapped.to;
    }
    const targets = this.#targets(parsed.tag, to);
    for (const target of targets) {
      // Checked before anything is journaled: a refused payload is the caller's 422, not a thread.
      let verdict = target.validate(decodePayload(parsed.node, target.schema));
      if (verdict instanceof Promise) verdict = await verdict;
      if (verdict instanceof Error) throw verdict;
      if (bus.queues.get(target.name)?.full) throw new BusyError(target.name);
    }
    let thread: ThreadState;
    if (request.thread) {
      // Another daemon may have started it.
      const loading = bus.store.load(request.thread);
      if (loading) await loading;
      const existing = bus.threads.thread(request.thread);
      if (!existing) throw new ThreadNotFoundError(request.thread);
      if (existing.stopped)
        throw new OrganismError('thread.stopped', `thread ${existing.id} has been stopped`);
      thread = existing;
    } else {
      thread = bus.threads.createThread(request.scope);
      bus.history.begin(thread.id, thread.created);
      bus.hooks.thread?.(thread.id, 'started');
      request.started?.(thread.id);
    }
    let firstId = '';
    // A caller's trace, when tracing is on and the header is a valid traceparent.
    const traceparent = bus.tracing?.accept(request.traceparent);
    for (const target of targets) {
      const frame = bus.threads.openFrame(thread, target.name, from, null);
      const id = await this.publisher.publish(
        thread,
        frame,
        'message',
        from,
        target.name,
        parsed.tag,
        parsed.xml,
        undefined,
        undefined,
        traceparent,
      );
      firstId ||= id ?? '';
    }
    // A 202 is a promise (invariant 9): with a journal, the answer waits until the accepted
    // messages are on disk as its fsync mode says (see src/bus/journal/journal.ts).
    const durable = bus.transport instanceof MemoryTransport ? bus.transport.durable() : undefined;
    if (durable) {
      await durable.catch((error: unknown) => {
        throw error instanceof JournalError
          ? new ServerError('server.overloaded', `not accepted: ${error.message}; retry later`, {
              retryAfterSeconds: 1,
            })
          : error;
      });
    }
    return { thread: thread.id, message: firstId };
  }

  #targets(tag: string, to: string | undefined): RuntimeListener[] {
    if (to !== undefined) {
      const target = this.bus.listeners.get(to);
      // The operator who injects may list the listeners anyway: a likely misspelling is named.
      if (!target)
        throw new RoutingError(`no listener named '${to}'${suggestion(to, [...this.bus.listeners.keys()])}`);
      if (target.tag !== tag) {
        throw new RoutingError(`listener '${to}' accepts <${target.tag}>, not <${tag}>`);
      }
      return [target];
    }
    const targets = this.bus.byTag.get(tag);
    if (!targets || targets.length === 0) {
      const likely = didYouMean(tag, [...this.bus.byTag.keys()]);
      throw new RoutingError(
        `no listener accepts <${tag}>${likely === undefined ? '' : ` — did you mean <${likely}>?`}`,
      );
    }
    return targets;
  }
}
