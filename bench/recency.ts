/**
 * The cost of touching one busy key in a per-thread (or per-caller) table that is full, against
 * the same touches with the table nearly empty: the figure that catches a table keeping recency by
 * `Map.delete(key); Map.set(key, v)`, which V8 makes ~30x slower for one key re-inserted among
 * 10,000 others (each delete stays in the key's bucket chain until a rehash).
 *
 * - history_append_us_p50_at_10k_threads: ThreadHistory.append to one busy thread while 10,000
 *   threads are kept (history.max_threads' default); floor_append_us_p50_at_100_threads is the
 *   same appends with 100 threads kept, in the same run. The bus appends every message it carries.
 * - usage_record_us_p50_at_10k_threads: UsageTracker.record for one busy thread (once per model
 *   call), floor with 100 threads.
 * - inject_take_us_p50_at_10k_callers: the API's RateLimiter.take for one busy caller (once per
 *   request), floor with 100 callers.
 *
 * Each sample is one batch of BATCH touches divided by BATCH (a single touch is below the timer's
 * resolution); samples are sorted and the p50 and p99 reported.
 */
import { UsageTracker } from '../src/agent/usage.ts';
import { type HistoryEntry, ThreadHistory } from '../src/bus/history/memory.ts';
import { RateLimiter } from '../src/server/rate-limit.ts';
import { percentile, round } from './support.ts';

const FULL = 10_000;
const FLOOR = 100;
const BATCH = 100;
const SAMPLES = 2_000;
/** A full table may cost this much more per touch than a nearly empty one. */
const TARGET_RATIO = 2;

/** Per-touch microseconds of `touch()` on a table `fill(n)` prepared, sorted. */
function perTouch(touch: () => void): Float64Array {
  for (let i = 0; i < SAMPLES; i++) touch(); // warm the JIT on the same path
  const samples = new Float64Array(SAMPLES);
  for (let s = 0; s < SAMPLES; s++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < BATCH; i++) touch();
    samples[s] = Number(process.hrtime.bigint() - start) / 1_000 / BATCH;
  }
  return samples.sort();
}

/** One line: the busy key's cost with FULL others kept, its floor with FLOOR kept. */
function line(
  figure: string,
  floorFigure: string,
  setup: (kept: number) => () => void,
): Record<string, unknown> {
  const full = perTouch(setup(FULL));
  const floor = perTouch(setup(FLOOR));
  const p50 = percentile(full, 50);
  const floorP50 = percentile(floor, 50);
  return {
    name: figure,
    [figure]: round(p50, 3),
    [figure.replace('_p50_', '_p99_')]: round(percentile(full, 99), 3),
    [floorFigure]: round(floorP50, 3),
    ratio: round(p50 / floorP50, 2),
    target_ratio: TARGET_RATIO,
    samples: SAMPLES,
    batch: BATCH,
  };
}

let clock = 1_700_000_000_000;
const message = (to: string): HistoryEntry => ({
  id: `m${clock}`,
  from: 'api',
  to,
  kind: 'message',
  payload: '<ping/>',
  time: clock++,
});

export async function* run(): AsyncIterable<Record<string, unknown>> {
  yield line('history_append_us_p50_at_10k_threads', 'floor_append_us_p50_at_100_threads', (kept) => {
    // The defaults: 1,000 messages per thread, 10,000 threads; the busy one among `kept`.
    const history = new ThreadHistory({ maxPerThread: 1_000, maxThreads: FULL });
    for (let i = 1; i < kept; i++) history.append(`thread-${i}`, message('greeter'));
    const entry = message('greeter');
    return () => history.append('busy', entry);
  });

  yield line('usage_record_us_p50_at_10k_threads', 'floor_record_us_p50_at_100_threads', (kept) => {
    const usage = new UsageTracker(FULL);
    const tokens = { input: 100, output: 20 };
    for (let i = 1; i < kept; i++) usage.record('agent', `thread-${i}`, tokens);
    return () => usage.record('agent', 'busy', tokens);
  });

  yield line('inject_take_us_p50_at_10k_callers', 'floor_take_us_p50_at_100_callers', (kept) => {
    // A rate no caller reaches, so every take refills and spends (the common path).
    const limiter = new RateLimiter({ perSecond: 1e9, burst: 1e9, maxKeys: FULL });
    for (let i = 1; i < kept; i++) limiter.take(`caller-${i}`);
    return () => limiter.take('busy');
  });
}
