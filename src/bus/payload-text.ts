/**
 * Small text helpers several parts of the bus need for payloads the runtime itself handles: the
 * root tag of XML it produced or repaired, and JSON that never throws (handler output and tool
 * arguments are arbitrary values).
 */

/** Root tag of payload XML the runtime itself produced or repaired (so it starts with `<name`). */
export function rootTag(xml: string): string {
  const match = /^<([A-Za-z_][\w.-]*:)?([A-Za-z_][\w.-]*)/.exec(xml);
  return match?.[2] ?? '';
}

export function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}
