/**
 * The last minutes of the organism's traffic for the dashboard's charts: every `intervalMs` the
 * process's counters (messages delivered, hop latency's sum and count) are read and the change
 * since the previous read kept as one point, `keep` points at most. So a dashboard opened now
 * shows the minutes before it was opened, not only what it sampled itself. Counters of the whole
 * process: several daemons in one process (tests) share them, like /metrics.
 */
import { drainHops, percentile } from '../../observability/hop-samples.ts';
import { metrics } from '../../observability/metrics.ts';

export interface SeriesPoint {
  /** End of the interval, ISO time. */
  time: string;
  messages_per_second: number;
  /** Mean hop latency over the interval in ms (the histogram's, waits for people included); null when no hop finished in it. */
  hop_latency_ms: number | null;
  /** Median and 95th percentile hop over the interval, ms, less time waiting for a person's approval. */
  hop_p50_ms: number | null;
  hop_p95_ms: number | null;
}

export interface SeriesOptions {
  /** Time between two reads, ms (default 5000). */
  intervalMs?: number;
  /** Points kept (default 120: ten minutes at 5 s). */
  keep?: number;
}

interface Totals {
  at: number;
  messages: number;
  hopSum: number;
  hopCount: number;
}

export class TrafficSeries {
  readonly #intervalMs: number;
  readonly #keep: number;
  readonly #points: SeriesPoint[] = [];
  #last: Totals | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: SeriesOptions = {}) {
    this.#intervalMs = options.intervalMs ?? 5000;
    this.#keep = options.keep ?? 120;
    if (!(this.#intervalMs >= 100) || !(this.#keep >= 1)) {
      throw new RangeError('TrafficSeries: intervalMs must be at least 100 and keep at least 1');
    }
  }

  get intervalMs(): number {
    return this.#intervalMs;
  }

  /** Starts reading; the timer never keeps the process alive. */
  start(): this {
    if (this.#timer) return this;
    void this.sample();
    this.#timer = setInterval(() => void this.sample(), this.#intervalMs);
    this.#timer.unref();
    return this;
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  points(): SeriesPoint[] {
    return [...this.#points];
  }

  /** Reads the counters now and adds the point since the last read (the first read only sets the base). */
  async sample(now = Date.now()): Promise<void> {
    const totals = await readTotals(now);
    const hops = drainHops(now);
    const last = this.#last;
    this.#last = totals;
    if (!last || totals.at <= last.at) return;
    const seconds = (totals.at - last.at) / 1000;
    // A counter that went down was reset (a test's registry reset): that interval says nothing.
    const messages = Math.max(0, totals.messages - last.messages);
    const count = totals.hopCount - last.hopCount;
    this.#points.push({
      time: new Date(totals.at).toISOString(),
      messages_per_second: Math.round((messages / seconds) * 100) / 100,
      hop_latency_ms: count > 0 ? Math.round(((totals.hopSum - last.hopSum) / count) * 1e6) / 1000 : null,
      hop_p50_ms: ms(percentile(hops, 0.5)),
      hop_p95_ms: ms(percentile(hops, 0.95)),
    });
    if (this.#points.length > this.#keep) this.#points.splice(0, this.#points.length - this.#keep);
  }
}

const ms = (v: number | null) => (v === null ? null : Math.round(v * 1000) / 1000);

async function readTotals(at: number): Promise<Totals> {
  const [messages, latency] = await Promise.all([metrics.messages.get(), metrics.hopLatency.get()]);
  let hopSum = 0;
  let hopCount = 0;
  for (const v of latency.values) {
    const name = (v as { metricName?: string }).metricName ?? '';
    if (name.endsWith('_sum')) hopSum += v.value;
    else if (name.endsWith('_count')) hopCount += v.value;
  }
  return { at, messages: messages.values.reduce((sum, v) => sum + v.value, 0), hopSum, hopCount };
}
