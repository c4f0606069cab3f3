// Live message rates per edge of the organism graph, counted from the stream: every listener-to-
// listener message and every tool call, over the last WINDOW_MS. Counting starts when this module
// loads (the overview), so a rate is 0 until messages flow, and falls back to 0 when they stop.
import { onEvent } from './api.js';

const WINDOW_MS = 10_000;
/** `from->to` -> times (ms) of the messages in the window, oldest first. */
const seen = new Map();

onEvent((e) => {
  const m = e.type === 'message' ? e.message : undefined;
  if (!m || (m.kind !== 'message' && m.kind !== 'tool-call')) return;
  const key = `${m.from}->${m.to}`;
  let times = seen.get(key);
  if (!times) {
    times = [];
    seen.set(key, times);
  }
  times.push(Date.now());
  if (times.length > 10_000) times.splice(0, times.length - 10_000);
});

/** Messages per second from `from` to `to` over the last window. */
export function rate(from, to, now = Date.now()) {
  const times = seen.get(`${from}->${to}`);
  if (!times) return 0;
  while (times.length && now - times[0] > WINDOW_MS) times.shift();
  return times.length / (WINDOW_MS / 1000);
}
