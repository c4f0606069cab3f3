/**
 * Hop durations for the dashboard's latency percentiles, with the time a person took to decide on
 * an approval taken out: a call that waited four seconds for someone says nothing about how fast
 * the organism is (the Prometheus histogram keeps the whole duration, queue wait and all). One
 * buffer per process, drained by the dashboard's series every interval; bounded so a daemon whose
 * series never drains (no API) does not grow.
 */

/** Samples kept between two drains at most; more are dropped (the percentiles stay representative). */
const MAX_SAMPLES = 50_000;
/** Approval waits older than this are forgotten (a hop lasting longer is not plausible). */
const KEEP_WAITS_MS = 3_600_000;

/** [start, end] ms of each wait for a person, by thread. */
const waits = new Map<string, Array<[number, number]>>();
// A preallocated buffer: a hop costs a store, not an array's growth (this runs on every delivery).
const samples = new Float64Array(MAX_SAMPLES);
let count = 0;

/** A call of `thread` waited for a person's decision from `start` to `end` (ms since the epoch). */
export function recordPersonWait(thread: string, start: number, end: number): void {
  if (!(end > start)) return;
  let list = waits.get(thread);
  if (!list) {
    list = [];
    waits.set(thread, list);
  }
  list.push([start, end]);
}

/** A hop of `thread` ended at `end` (default now) after `ms`: kept less the person waits inside it. */
export function recordHop(thread: string | undefined, ms: number, end?: number): void {
  if (count >= MAX_SAMPLES) return;
  let own = ms;
  const list = waits.size === 0 || thread === undefined ? undefined : waits.get(thread);
  if (list) {
    const until = end ?? Date.now();
    const start = until - ms;
    for (const [from, to] of list) own -= Math.max(0, Math.min(to, until) - Math.max(from, start));
  }
  samples[count++] = own > 0 ? own : 0;
}

/** The hops since the last drain (ms); forgets waits too old to fall inside a later hop. */
export function drainHops(now = Date.now()): number[] {
  const out = Array.from(samples.subarray(0, count));
  count = 0;
  for (const [thread, list] of waits) {
    const kept = list.filter(([, to]) => now - to < KEEP_WAITS_MS);
    if (kept.length === 0) waits.delete(thread);
    else if (kept.length !== list.length) waits.set(thread, kept);
  }
  return out;
}

/** The p-th percentile (0..1) of some figures, nearest rank; null for none. */
export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}
