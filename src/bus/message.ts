/**
 * A message as it travels from hop to hop. Plain data only (invariant 6): no closures, no parsed
 * trees, nothing another process could not receive as JSON. The envelope XML is the payload's
 * carrier; the other fields are routing metadata the runtime itself wrote, so no hop has to trust
 * what a handler put in the text.
 */
/** Every kind of message, in one place: the type, the API's filters and the Redis codec read it. */
export const MESSAGE_KINDS = [
  /** An ordinary payload sent to a listener (by tag, by `to`, or by ingress). */
  'message',
  /** A reply travelling back up the call chain via respond(). */
  'response',
  /** `<huh>`: the sender's output did not parse, validate or route. */
  'huh',
  /** `<SystemError>`: delivery or handler failure reported to the sender. */
  'system-error',
  /** A tool call from a listener to a tool, and the tool's answer. */
  'tool-call',
  'tool-result',
  /**
   * A record, not a delivery: one model turn of an LLM agent (its text, the calls it asked for,
   * the tokens it used), so an agent can resume from its thread after a restart.
   */
  'model-turn',
  /**
   * A record, not a delivery: why a handler failed or timed out (its error's class, message and
   * top frame), for operators reading the thread; the sender only gets the generic `<SystemError>`.
   */
  'failure',
  /**
   * Records, not deliveries: a tool call waiting for a person's approval, and the decision on it
   * (README "Approval"), so the thread shows why a call waited and who let it run or not.
   */
  'approval-request',
  'approval-decision',
] as const;

export type MessageKind = (typeof MESSAGE_KINDS)[number];

export interface Message {
  /** Unique id of this message; the idempotency key for effects it causes. */
  id: string;
  /**
   * The counter `id` was made from, when this process made it with nextId (bus/ids.ts); never
   * carried by a transport. Tracing writes the id's bytes from it (writeMessageId) rather than
   * reading the string, which would flatten it.
   */
  idCount?: number | undefined;
  /** Root thread id: one per injection, stable for the whole conversation, opaque to handlers. */
  thread: string;
  /** Call-chain frame the target handles this message in. Internal; never shown to handlers. */
  frame: string;
  /** Sender name, always written by the runtime. */
  from: string;
  /** Target listener name, resolved by the router. */
  to: string;
  /** Local name of the payload's root element. */
  tag: string;
  /** The full envelope XML, built by the runtime (see xml/envelope.ts). */
  envelope: string;
  kind: MessageKind;
  /** How many hops the thread had taken when this message was sent. */
  hop: number;
  /** Epoch milliseconds when the message was sent. */
  time: number;
  /**
   * Set when the message carries its frame: a send that nothing can answer (its frame links to no
   * parent) opens a frame only its target will use, so a shared thread store does not keep it and
   * the target rebuilds it from the message (listener `to`, caller `from`, no parent, this depth).
   */
  frameDepth?: number;
}

/** What the API and history show for one message. */
export interface MessageView {
  id: string;
  from: string;
  to: string;
  kind: MessageKind;
  payload: string;
  time: string;
}
