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
import type { Published, Publisher } from './publish.ts';
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
  route(
    delivery: Delivery,
    result: HandlerResult,
    confirmations?: Promise<void>[],
  ): Promise<void> | undefined {
    // One output object (most handler runs) is routed as it is, with no array made around it.
    const one = typeof result === 'object' && result !== null && !Array.isArray(result);
    const outgoing = one ? undefined : normalizeResult(result);
    if (outgoing?.length === 0) return undefined;
    const { message } = delivery;
    const origin: Origin = confirmations
      ? { id: message.id, seq: 0, confirmations, trace: delivery.span }
      : { id: message.id, seq: 0, trace: delivery.span };
    // Output produced while handling an error report is not answered with another report: that
    // could loop forever between a confused handler and the runtime.
    const quiet = message.kind === 'huh' || message.kind === 'system-error';
    if (outgoing && outgoing.length > 1) return this.#routeAll(delivery, outgoing, origin, quiet);
    // One output: published at once when the transport takes it at once (in memory), with no
    // promise and no microtask turn between one hop and the next.
    const out = outgoing ? outgoing[0]! : (result as Outgoing);
    if (delivery.thread.stopped) return undefined;
    let step: Stepped;
    try {
      step = this.#output(delivery, out, origin, quiet);
    } catch (error) {
      this.#refusedOutput(delivery, out, error, origin, quiet);
      return undefined;
    }
    if (typeof step !== 'object') {
      if (out.kind === 'respond') this.bus.threads.pruneFrame(delivery.frame);
      return undefined;
    }
    return step.then(
      () => {
        if (out.kind === 'respond') this.bus.threads.pruneFrame(delivery.frame);
      },
      (error: unknown) => this.#refusedOutput(delivery, out, error, origin, quiet),
    );
  }

  /** Several outputs, one after the other: responses last (they prune this frame, and sends opened under it must exist first). */
  async #routeAll(delivery: Delivery, outgoing: Outgoing[], origin: Origin, quiet: boolean): Promise<void> {
    const ordered = [
      ...outgoing.filter((o) => o.kind !== 'respond'),
      ...outgoing.filter((o) => o.kind === 'respond'),
    ];
    let responded = false;
    for (const out of ordered) {
      if (delivery.thread.stopped) return;
      try {
        await this.#output(delivery, out, origin, quiet);
        if (out.kind === 'respond') responded = true;
      } catch (error) {
        this.#refusedOutput(delivery, out, error, origin, quiet);
      }
    }
    if (responded) this.bus.threads.pruneFrame(delivery.frame);
  }

  /** One output published: done when the result is not a promise, else when it settles. */
  #output(delivery: Delivery, out: Outgoing, origin: Origin, quiet: boolean): Stepped {
    const { thread, frame, target: source } = delivery;
    if (out.kind === 'send') return this.#send(thread, frame, source, out.to, out.payload, quiet, origin);
    if (out.kind === 'emit') return this.#emit(thread, frame, source, out.payload, quiet, origin);
    return this.#respond(thread, frame, source, out.payload, origin);
  }

  /** An output that could not go anywhere: its author hears why (unless it is handling a report). */
  #refusedOutput(delivery: Delivery, out: Outgoing, error: unknown, origin: Origin, quiet: boolean): void {
    const { thread, frame, target: source } = delivery;
    const attempt = typeof out.payload === 'string' ? out.payload : safeJson(out.payload);
    const reason: HuhReason = error instanceof XmlError ? 'parse' : 'validate';
    this.bus.logger.warn({ err: error, thread: thread.id, listener: source.name }, 'handler output refused');
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

  #send(
    thread: ThreadState,
    frame: Frame,
    source: RuntimeListener,
    to: string,
    payload: Outgoing['payload'],
    quiet: boolean,
    origin?: Origin,
  ): Stepped {
    const target = this.bus.listeners.get(to);
    if (!target || !source.peers.has(to)) {
      if (!quiet) this.failures.routingError(thread, frame, source, origin);
      return undefined;
    }
    if (typeof payload !== 'string') {
      // Encoded by the target's schema under its tag: the tag is known, not read back.
      const xml = encodePayload(target.tag, payload, target.schema, this.bus.xmlLimits.maxElements);
      return this.#publishTo(thread, frame, source, target, target.tag, xml, origin);
    }
    const xmls = repairPayloads(payload, this.bus.xmlLimits);
    if (xmls.length === 1) {
      const xml = xmls[0]!;
      return this.#publishTo(thread, frame, source, target, sharedTag(rootTag(xml), target.tag), xml, origin);
    }
    return this.#sendEach(thread, frame, source, target, xmls, origin);
  }

  /** Several payloads repaired out of one text: published one after the other. */
  async #sendEach(
    thread: ThreadState,
    frame: Frame,
    source: RuntimeListener,
    target: RuntimeListener,
    xmls: string[],
    origin?: Origin,
  ): Promise<void> {
    for (const xml of xmls) {
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

  #respond(
    thread: ThreadState,
    frame: Frame,
    source: RuntimeListener,
    payload: Outgoing['payload'],
    origin?: Origin,
  ): Stepped {
    if (typeof payload !== 'string' && !source.response) {
      throw new OrganismError(
        'respond.no_response_spec',
        `${source.name} responded with an object but declares no response { tag, schema }; respond with XML text or declare one`,
      );
    }
    const parent = frame.parent ? this.bus.threads.frame(frame.parent) : null;
    if (parent === undefined) return undefined; // the caller's frame is gone: nobody is waiting any more
    const xmls = this.#payloadXmls(payload, source.response?.tag ?? '', source.response?.schema ?? {});
    // parent null: the caller is an ingress or cannot receive replies; the reply is recorded only.
    if (xmls.length === 1) return this.#reply(thread, frame, parent, source, xmls[0]!, origin);
    return this.#replyEach(thread, frame, parent, source, xmls, origin);
  }

  async #replyEach(
    thread: ThreadState,
    frame: Frame,
    parent: Frame | null,
    source: RuntimeListener,
    xmls: string[],
    origin?: Origin,
  ): Promise<void> {
    for (const xml of xmls) await this.#reply(thread, frame, parent, source, xml, origin);
  }

  #reply(
    thread: ThreadState,
    frame: Frame,
    parent: Frame | null,
    source: RuntimeListener,
    xml: string,
    origin?: Origin,
  ): Published {
    return this.publisher.publish(
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

  /** One message from `source` to `target`, in a frame of its own below the sender's. */
  #publishTo(
    thread: ThreadState,
    frame: Frame,
    source: RuntimeListener,
    target: RuntimeListener,
    tag: string,
    xml: string,
    origin: Origin | undefined,
  ): Published {
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

/** What publishing one output gives: done now (an id, or nothing), or a promise of it. */
type Stepped = Published | Promise<void>;

function normalizeResult(result: HandlerResult): Outgoing[] {
  if (result === undefined || result === null) return [];
  if (typeof result === 'string') return result.trim() ? [{ kind: 'emit', payload: result }] : [];
  if (Array.isArray(result)) return result as Outgoing[];
  return [result as Outgoing];
}
