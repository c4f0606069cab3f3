/**
 * What a session sent on its SSE streams, kept so a client that lost a stream can reconnect with
 * Last-Event-ID and get what it missed (resumability; SSE polling, SEP-1699). In memory, one per
 * session, bounded by count: the oldest events go first, and a client that asks for an event no
 * longer kept is told so (400) instead of being handed a stream with a silent gap.
 */
import type { EventStore } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

interface Stored {
  id: string;
  stream: string;
  seq: number;
  message: JSONRPCMessage;
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
  #events: Stored[] = [];
  #head = 0;
  #seq = 0;

  constructor(maxEvents: number) {
    this.#max = Math.max(1, maxEvents);
  }

  get size(): number {
    return this.#events.length - this.#head;
  }

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const seq = ++this.#seq;
    const id = eventId(streamId, seq);
    this.#events.push({ id, stream: streamId, seq, message });
    if (this.size > this.#max) {
      this.#head++;
      // Compacted now and then rather than shifted on every event.
      if (this.#head > this.#max) {
        this.#events = this.#events.slice(this.#head);
        this.#head = 0;
      }
    }
    return id;
  }

  /** The stream of an event still kept; undefined for an id this store never gave or let go. */
  async getStreamIdForEventId(id: string): Promise<string | undefined> {
    const parsed = parse(id);
    if (!parsed) return undefined;
    const oldest = this.#events[this.#head];
    if (!oldest || parsed.seq < oldest.seq || parsed.seq > this.#seq) return undefined;
    return parsed.stream;
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
