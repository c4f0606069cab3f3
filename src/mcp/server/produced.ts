/**
 * What a listener call's thread produced when it ended without a reply to the caller: the messages
 * recorded after the one the caller injected (greeter -> shouter -> printer), so an MCP client sees
 * where the work went instead of only "ended". Bounded: a long thread gives its last messages and
 * says how many it left out, a long payload its beginning and how much was cut.
 */
import type { MessageView } from '../../bus/message.ts';

export interface ProducedMessage {
  from: string;
  to: string;
  kind: string;
  payload: string;
}

export interface Produced {
  messages: ProducedMessage[];
  /** Messages left out (the earliest ones) to stay within the bound. */
  omitted: number;
}

export interface ProducedLimits {
  /** Most messages given back. */
  messages: number;
  /** Most characters of one payload given back. */
  payloadChars: number;
}

export function defaultProducedLimits(): ProducedLimits {
  return { messages: 20, payloadChars: 2000 };
}

/** The messages after the caller's first one (all of them when the caller sent none here). */
export function threadProduced(
  messages: readonly MessageView[],
  caller: string,
  limits: ProducedLimits = defaultProducedLimits(),
): Produced {
  const start = messages.findIndex((m) => m.from === caller);
  const after = messages.slice(start + 1);
  const kept = after.slice(Math.max(0, after.length - limits.messages));
  return {
    messages: kept.map((m) => ({
      from: m.from,
      to: m.to,
      kind: m.kind,
      payload: cut(m.payload, limits.payloadChars),
    })),
    omitted: after.length - kept.length,
  };
}

/** One line per message, `from -> to: payload`, after a line saying the thread ended. */
export function producedText(target: string, produced: Produced): string {
  if (produced.messages.length === 0)
    return `the thread ended without a reply from ${target}; nothing was sent on`;
  const lines = produced.messages.map((m) => `${m.from} -> ${m.to}: ${m.payload}`);
  const omitted = produced.omitted > 0 ? [`(${produced.omitted} earlier messages left out)`] : [];
  return [`the thread ended without a reply from ${target}; what it sent:`, ...omitted, ...lines].join('\n');
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more characters)`;
}
