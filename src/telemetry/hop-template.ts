/**
 * The last hop span written for a trace, kept as its bytes, for the trace's next span to copy
 * whole and write only what differs: its span id, its parent's, its two times, its hop count and
 * its message id. The hops of a thread (one trace) mostly share everything else: the trace id, the
 * route (name and from, to, tag, kind), the thread, the outcome, the kind of parent and the flags
 * (every span written is sampled). Writing a span field by field cost about a microsecond, half of
 * what exporting a hop cost the bus; the copy and the six fields cost about a third of that.
 *
 * A template is used only where the bytes it holds are what writing the span field by field would
 * give: the same shape (all the above equal, no captured payload) and variable-length fields of the
 * same length (the hop's varint, the message id's bytes). Anything else is written field by field
 * (hop.ts), and becomes the trace's template.
 */
import { writeMessageId } from '../bus/ids.ts';
import type { TraceParent } from './traceparent.ts';
import type { HopMessage, HopOutcome } from './types.ts';
import { varintSize, type Wire } from './wire.ts';

/** How a span names its parent: none (a root), from a span of this process's bytes, or from hex. */
export const ParentKind = { None: 0, Own: 1, Hex: 2 } as const;
export type ParentKind = (typeof ParentKind)[keyof typeof ParentKind];

/** A span id as bytes: `bytes[at]` to `bytes[at + 7]` (a SpanIds, see ids.ts). */
interface IdBytes {
  readonly bytes: Uint8Array;
  readonly at: number;
}

/** Where the fields that differ between spans of one shape are, from the start of the span. */
export interface TemplateOffsets {
  /** The span id's first byte (after its length byte). */
  span: number;
  /** The parent span id's length byte (-1: no parent). */
  parent: number;
  /** The start time's first byte; the end time's is 9 bytes on (its tag between). */
  start: number;
  /** The hop count's varint. */
  hop: number;
  /** The message id's length byte; the id's bytes follow. */
  id: number;
}

/**
 * The longest message id a template holds: with the attribute's key (21 bytes) and its tags and
 * lengths, the KeyValue stays under 128 bytes, so every length before the id takes one byte.
 */
const MAX_ID = 100;

export class HopTemplate {
  /** The route and thread of the span the template was made of (not its message: kept small). */
  private readonly thread: string;
  private readonly from: string;
  private readonly to: string;
  private readonly tag: string;
  private readonly kind: string;
  private readonly idLength: number;

  private constructor(
    private readonly bytes: Buffer,
    private readonly at: TemplateOffsets,
    message: HopMessage,
    private readonly outcome: HopOutcome,
    private readonly parentKind: ParentKind,
    private readonly parentRemote: boolean,
    /** The hop count's varint length. */
    private readonly hopSize: number,
  ) {
    this.thread = message.thread;
    this.from = message.from;
    this.to = message.to;
    this.tag = message.tag;
    this.kind = message.kind;
    this.idLength = message.id.length;
  }

  /**
   * The span just written into `w` from `begin` as the template of its shape; undefined when its
   * message id is not one byte per character (an id of the same length might then differ in bytes)
   * or so long that the lengths around it take two bytes (the offsets would move).
   */
  static of(
    w: Wire,
    begin: number,
    at: TemplateOffsets,
    message: HopMessage,
    outcome: HopOutcome,
    parentKind: ParentKind,
    parentRemote: boolean,
  ): HopTemplate | undefined {
    if (message.id.length > MAX_ID || w.buf[begin + at.id] !== message.id.length) return undefined;
    const bytes = Buffer.from(w.buf.subarray(begin, w.pos));
    return new HopTemplate(bytes, at, message, outcome, parentKind, parentRemote, varintSize(message.hop));
  }

  /**
   * Writes the span into `w` from this template, when it has this template's shape; false (and
   * nothing written) when it has not.
   */
  writeAgain(
    w: Wire,
    m: HopMessage,
    outcome: HopOutcome,
    ids: IdBytes,
    parent: Pick<TraceParent, 'spanId'> | IdBytes | undefined,
    parentKind: ParentKind,
    parentRemote: boolean,
    start: number,
    end: number,
  ): boolean {
    if (
      m.thread !== this.thread ||
      m.to !== this.to ||
      m.from !== this.from ||
      m.tag !== this.tag ||
      m.kind !== this.kind ||
      outcome !== this.outcome ||
      parentKind !== this.parentKind ||
      parentRemote !== this.parentRemote ||
      m.id.length !== this.idLength ||
      varintSize(m.hop) !== this.hopSize
    ) {
      return false;
    }
    const bytes = this.bytes;
    const at = this.at;
    w.ensure(bytes.length);
    const begin = w.pos;
    w.bytes(bytes);
    const end0 = w.pos;
    // The id, its length byte the template's: one byte a character, or not this template's shape.
    // One this process made is written from its counter (reading the string would flatten it).
    const id = m.id;
    const buf = w.buf;
    const idAt = begin + at.id + 1;
    if (m.idCount !== undefined) {
      if (!writeMessageId(m.idCount, buf, idAt, id.length)) {
        w.pos = begin;
        return false;
      }
    } else {
      let p = idAt;
      for (let i = 0; i < id.length; i++) {
        const c = id.charCodeAt(i);
        if (c > 127) {
          w.pos = begin;
          return false;
        }
        buf[p++] = c;
      }
    }
    w.pos = begin + at.span - 1;
    w.id(ids.bytes, ids.at, 8);
    if (parentKind !== ParentKind.None) {
      w.pos = begin + at.parent;
      if (parentKind === ParentKind.Own) {
        const own = parent as IdBytes;
        w.id(own.bytes, own.at, 8);
      } else {
        w.hex((parent as Pick<TraceParent, 'spanId'>).spanId);
      }
    }
    w.pos = begin + at.start;
    w.timeNanos(start);
    w.pos += 1;
    w.timeNanos(end);
    w.pos = begin + at.hop;
    w.varint(m.hop);
    w.pos = end0;
    return true;
  }
}
