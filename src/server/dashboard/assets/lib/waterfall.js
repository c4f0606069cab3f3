// A thread as a waterfall: from its records, the bars of a time axis. A hop is a message delivered
// to a listener, until that listener's last record before its next hop; inside it, each model turn
// (from the agent's previous record to the turn's record) and each tool call (to its result, id
// `<call>.result`), and inside a call the wait for a person (approval request to decision).

const HOP_KINDS = new Set(['message', 'response', 'huh', 'system-error']);

/** [{id, kind, label, start, end, depth, message, open}] in order of start (ms since the epoch). */
export function waterfallBars(messages, now = Date.now()) {
  const times = messages.map((m) => Date.parse(m.time));
  const bars = [];
  const byId = new Map(messages.map((m, i) => [m.id, i]));
  // The hop each listener is in now (the index of its bar), while records of it come.
  const current = new Map();
  const lastOf = new Map();
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    const t = times[i];
    const owner = m.kind === 'tool-result' || m.kind === 'approval-decision' ? m.to : m.from;
    const hop = current.get(owner);
    if (hop !== undefined) bars[hop].end = Math.max(bars[hop].end, t);
    if (HOP_KINDS.has(m.kind)) {
      bars.push({
        id: m.id,
        kind: 'hop',
        label: `${m.from} → ${m.to}`,
        start: t,
        end: t,
        depth: 0,
        message: m,
      });
      current.set(m.to, bars.length - 1);
      lastOf.set(m.to, t);
    } else if (m.kind === 'model-turn') {
      const from = lastOf.get(m.from) ?? t;
      bars.push({
        id: m.id,
        kind: 'model-turn',
        label: `${m.from}: model turn`,
        start: from,
        end: t,
        depth: 1,
        message: m,
      });
    } else if (m.kind === 'tool-call') {
      const done = byId.get(`${m.id}.result`);
      bars.push({
        id: m.id,
        kind: 'tool-call',
        label: `${m.from} → ${m.to}`,
        start: t,
        end: done === undefined ? now : times[done],
        open: done === undefined,
        depth: 1,
        message: m,
      });
    } else if (m.kind === 'approval-request') {
      const approval = /<approval>([^<]*)<\/approval>/.exec(m.payload)?.[1];
      const decision = messages.findIndex(
        (d, j) =>
          j > i &&
          d.kind === 'approval-decision' &&
          approval &&
          d.payload.includes(`<approval>${approval}</approval>`),
      );
      bars.push({
        id: m.id,
        kind: 'approval-wait',
        label: `${m.from}: waiting for a person`,
        start: t,
        end: decision < 0 ? now : times[decision],
        open: decision < 0,
        depth: 2,
        message: m,
      });
    }
    if (m.kind !== 'tool-result' && m.kind !== 'approval-decision') lastOf.set(owner, t);
    else lastOf.set(m.to, t);
  }
  return bars;
}
