/**
 * Routing a handler's output: respond / send / emit, in that listener's name and thread. Sends
 * and emits go only to declared peers and open a child frame; responses travel to the caller's
 * frame. Output given as text is repaired and unwrapped, output given as an object is encoded by
 * the target's schema. Output that cannot go anywhere is answered with a `<huh>` to its author.
 */
import { OrganismError, XmlError } from '../errors.ts';
import type { HandlerResult, Outgoing } from '../listener/types.ts';
import { encodePayload } from '../xml/codec.ts';
import { repairPayloads } from '../xml/repair.ts';
import type { BusContext, Delivery, Origin } from './bus-context.ts';
import type { Failures } from './failures.ts';
import type { RuntimeListener } from './listeners.ts';
import { rootTag, safeJson } from './payload-text.ts';
import type { Publisher } from './publish.ts';
import type { HuhReason } from './system.ts';
import type { Frame, ThreadState } from './threads.ts';
import { unwrapEnvelope } from './unwrap.ts';

export class Router {
  constructor(
    private readonly bus: BusContext,
    private readonly publisher: Publisher,
    private readonly failures: Failures,
  ) {}

  /**
   * Publishes a handler's output. With `confirmations`, the transport's confirmations of the
   * outputs are collected there instead of awaited (in order all the same: the transport keeps
   * the order it was handed them in).
   */
  async route(delivery: Delivery, result: HandlerResult, confirmations?: Promise<void>[]): Promise<void> {
    const outgoing = normalizeResult(result);
    if (outgoing.length === 0) return;
    const { thread, frame, target: source, message } = delivery;
    const origin: Origin = confirmations
      ? { id: message.id, seq: 0, confirmations, trace: delivery.span }
      : { id: message.id, seq: 0, trace: delivery.span };
    // Output produced while handling an error report is not answered with another report: that
    // could loop forever between a confused handler and the runtime.
    const quiet = message.kind === 'huh' || message.kind === 'system-error';
    // Responses go last: they prune this frame, and sends opened under it must exist first.
    const ordered =
      outgoing.length === 1
        ? outgoing
        : [...outgoing.filter((o) => o.kind !== 'respond'), ...outgoing.filter((o) => o.kind === 'respond')];
    let responded = false;
    for (const out of ordered) {
      if (thread.stopped) return;
      try {
        if (out.kind === 'send') await this.#send(thread, frame, source, out.to, out.payload, quiet, origin);
        else if (out.kind === 'emit') await this.#emit(thread, frame, source, out.payload, quiet, origin);
        else {
          await this.#respond(thread, frame, source, out.payload, origin);
          responded = true;
        }
      } catch (error) {
        const attempt = typeof out.payload === 'string' ? out.payload : safeJson(out.payload);
        const reason: HuhReason = error instanceof XmlError ? 'parse' : 'validate';
        this.bus.logger.warn(
          { err: error, thread: thread.id, listener: source.name },
          'handler output refused',
        );
        if (!quiet)
          this.failures.huhToSelf(
            thread,
            frame,
            source,
            reason,
            attempt,
            error instanceof OrganismError ? error.message : undefined,
            origin,
          );
      }
    }
    if (responded) this.bus.threads.pruneFrame(frame);
  }

  async #send(
    thread: ThreadState,
    frame: Frame,
    source: RuntimeListener,
    to: string,
    payload: Outgoing['payload'],
    quiet: boolean,
    origin?: Origin,
  ): Promise<void> {
    const target = this.bus.listeners.get(to);
    if (!target || !source.peers.has(to)) {
      if (!quiet) this.failures.routingError(thread, frame, source, origin);
      return;
    }
    if (typeof payload !== 'string') {
      // Encoded by the target's schema under its tag: the tag is known, not read back.
      const xml = encodePayload(target.tag, payload, target.schema, this.bus.xmlLimits.maxElements);
      await this.#publishTo(thread, frame, source, target, target.tag, xml, origin);
      return;
    }
    for (const xml of repairPayloads(payload, this.bus.xmlLimits)) {
      await this.#publishTo(thread, frame, source, target, sharedTag(rootTag(xml), target.tag), xml, origin);
    }
  }

  /** Text output routed by its root tag (or by the `<to>` of an envelope it is wrapped in). */
  async #emit(
    thread: ThreadState,
    frame: Frame,
    source: RuntimeListener,
    text: string,
    quiet: boolean,
    origin?: Origin,
  ): Promise<void> {
    const bus = this.bus;
    for (let xml of repairPayloads(text, bus.xmlLimits)) {
      const unwrapped = unwrapEnvelope(xml, rootTag(xml), undefined, bus.xmlLimits);
      if (unwrapped?.to) {
        await this.#send(thread, frame, source, unwrapped.to, unwrapped.payloadXml, quiet, origin);
        continue;
      }
      if (unwrapped) xml = unwrapped.payloadXml;
      const tag = rootTag(xml);
      const targets = (bus.byTag.get(tag) ?? []).filter((t) => source.peers.has(t.name));
      if (targets.length === 0) {
        if (!quiet) this.failures.huhToSelf(thread, frame, source, 'route', xml, undefined, origin);
        continue;
      }
      for (const target of targets)
        await this.#publishTo(thread, frame, source, target, target.tag, xml, origin);
    }
  }

  async #respond(
    thread: ThreadState,
    frame: Frame,
    source: RuntimeListener,
    payload: Outgoing['payload'],
    origin?: Origin,
  ): Promise<void> {
    if (typeof payload !== 'string' && !source.response) {
      throw new OrganismError(
        'respond.no_response_spec',
        `${source.name} responded with an object but declares no response { tag, schema }; respond with XML text or declare one`,
      );
    }
    const parent = frame.parent ? this.bus.threads.frame(frame.parent) : null;
    if (parent === undefined) return; // the caller's frame is gone: nobody is waiting any more
    for (const xml of this.#payloadXmls(payload, source.response?.tag ?? '', source.response?.schema ?? {})) {
      // parent null: the caller is an ingress or cannot receive replies; the reply is recorded only.
      await this.publisher.publish(
        thread,
        parent,
        'response',
        source.name,
        frame.caller,
        rootTag(xml),
        xml,
        frame.depth,
        origin,
      );
    }
  }

  /** One message from `source` to `target`, in a frame of its own below the sender's. */
  #publishTo(
    thread: ThreadState,
    frame: Frame,
    source: RuntimeListener,
    target: RuntimeListener,
    tag: string,
    xml: string,
    origin: Origin | undefined,
  ): Promise<string | undefined> {
    const child = this.#openChildFrame(thread, target, source, frame);
    return this.publisher.publish(
      thread,
      child,
      'message',
      source.name,
      target.name,
      tag,
      xml,
      undefined,
      origin,
    );
  }

  /**
   * A send opens a frame below the sender's. It links back only if the sender has onReply: a reply
   * to a listener that cannot receive one is recorded and goes no further, so nothing needs the
   * sender's frame once its handler is done (see handle.ts).
   */
  #openChildFrame(
    thread: ThreadState,
    target: RuntimeListener,
    source: RuntimeListener,
    frame: Frame,
  ): Frame {
    return this.bus.threads.openFrame(
      thread,
      target.name,
      source.name,
      source.onReply ? frame : null,
      frame.depth + 1,
    );
  }

  /** Handler payload (object or XML text) to clean payload XML strings. */
  #payloadXmls(payload: Outgoing['payload'], tag: string, schema: Record<string, unknown>): string[] {
    if (typeof payload === 'string') return repairPayloads(payload, this.bus.xmlLimits);
    return [encodePayload(tag, payload, schema, this.bus.xmlLimits.maxElements)];
  }
}

/** The tag as the listener holds it when it is the same: one string kept by every waiting message, not one each. */
function sharedTag(tag: string, known: string): string {
  return tag === known ? known : tag;
}

function normalizeResult(result: HandlerResult): Outgoing[] {
  if (result === undefined || result === null) return [];
  if (typeof result === 'string') return result.trim() ? [{ kind: 'emit', payload: result }] : [];
  if (Array.isArray(result)) return result as Outgoing[];
  return [result as Outgoing];
}
