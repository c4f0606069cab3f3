/**
 * What a session sent on its SSE streams, kept so a client that lost a stream can reconnect with
 * Last-Event-ID and get what it missed (resumability; SSE polling, SEP-1699). In memory, one per
 * session, bounded by count and by bytes (a tool result may be large): the oldest events go first,
 * and a client that asks for an event no longer kept is told so (400) instead of being handed a
 * stream with a silent gap.
 */
import type { EventStore } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

interface Stored {
  id: string;
  stream: string;
  seq: number;
  message: JSONRPCMessage;
  bytes: number;
}

/** `<stream>.<seq>`: visible ASCII, and the stream is read back from the id alone. */
function eventId(stream: string, seq: number): string {
  return `${stream}.${seq}`;
}

function parse(id: string): { stream: string; seq: number } | undefined {
  const dot = id.lastIndexOf('.');
  if (dot <= 0) return undefined;
  const seq = Number(id.slice(dot + 1));
  return Number.isSafeInteger(seq) ? { stream: id.slice(0, dot), seq } : undefined;
}

export class BoundedEventStore implements EventStore {
  readonly #max: number;
  readonly #maxBytes: number;
  #bytes = 0;
  #events: Stored[] = [];
  #head = 0;
  #seq = 0;

  /** The newest event is always kept, whatever its size: the stream it belongs to needs it. */
  constructor(maxEvents: number, maxBytes = Number.POSITIVE_INFINITY) {
    this.#max = Math.max(1, maxEvents);
    this.#maxBytes = maxBytes;
  }

  get bytes(): number {
    return this.#bytes;
  }

  get size(): number {
    return this.#events.length - this.#head;
  }

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const seq = ++this.#seq;
    const id = eventId(streamId, seq);
    // What the stream writes is this JSON; its length is what keeping it costs (UTF-16 aside).
    const bytes = JSON.stringify(message).length;
    this.#events.push({ id, stream: streamId, seq, message, bytes });
    this.#bytes += bytes;
    while (this.size > this.#max || (this.#bytes > this.#maxBytes && this.size > 1)) {
      this.#bytes -= this.#events[this.#head]!.bytes;
      this.#head++;
    }
    // Compacted now and then rather than shifted on every event.
    if (this.#head > 64 && this.#head > this.size) {
      this.#events = this.#events.slice(this.#head);
      this.#head = 0;
    }
    return id;
  }

  /**
   * The stream of an event still kept; undefined for an id this store never gave or let go (an id
   * made up from another stream's name and a number in range included).
   */
  async getStreamIdForEventId(id: string): Promise<string | undefined> {
    const parsed = parse(id);
    if (!parsed) return undefined;
    const oldest = this.#events[this.#head];
    if (!oldest || parsed.seq < oldest.seq || parsed.seq > this.#seq) return undefined;
    // Sequence numbers have no gaps, so the event sits at its offset from the oldest one.
    const event = this.#events[this.#head + (parsed.seq - oldest.seq)];
    return event?.id === id ? parsed.stream : undefined;
  }

  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> },
  ): Promise<string> {
    const parsed = parse(lastEventId);
    if (!parsed) throw new Error(`event id ${lastEventId} is not one this server gives`);
    for (let i = this.#head; i < this.#events.length; i++) {
      const event = this.#events[i]!;
      if (event.stream !== parsed.stream || event.seq <= parsed.seq) continue;
      // A priming event (empty data) only opened the stream; there is nothing in it to replay.
      if (Object.keys(event.message).length === 0) continue;
      await send(event.id, event.message);
    }
    return parsed.stream;
  }
}
