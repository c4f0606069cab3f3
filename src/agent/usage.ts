/**
 * Token usage per agent and per thread. The per-thread table is what `budget.tokens` is checked
 * against; it is bounded (least recently used threads are forgotten first) so a long-running daemon
 * does not grow with every thread it has ever seen.
 */
import { type RecencyTable, recencyTable } from '../recency.ts';
import type { TokenUsage } from './types.ts';

export interface UsageTotals {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  /** Model calls made. */
  calls: number;
}

export interface UsageStats {
  agents: Record<string, UsageTotals>;
  /** thread -> agent -> totals, for the threads still remembered. */
  threads: Record<string, Record<string, UsageTotals>>;
}

function empty(): UsageTotals {
  return { input_tokens: 0, output_tokens: 0, total_tokens: 0, calls: 0 };
}

function add(to: UsageTotals, usage: TokenUsage): void {
  to.input_tokens += usage.input;
  to.output_tokens += usage.output;
  to.total_tokens += usage.input + usage.output;
  to.calls += 1;
}

export class UsageTracker {
  readonly #agents = new Map<string, UsageTotals>();
  /**
   * Recency is a model call (record) or a seed; reads peek. Not a Map re-inserted per call: see
   * ../recency.ts for what that cost at 10,000 threads.
   */
  readonly #threads: RecencyTable<string, Map<string, UsageTotals>>;

  constructor(maxThreads = 10_000) {
    this.#threads = recencyTable(maxThreads);
  }

  record(agent: string, thread: string, usage: TokenUsage): void {
    const totals = this.#agents.get(agent) ?? empty();
    this.#agents.set(agent, totals);
    add(totals, usage);
    const byAgent = this.#byAgent(thread);
    const own = byAgent.get(agent) ?? empty();
    byAgent.set(agent, own);
    add(own, usage);
  }

  /** Whether this tracker has counted `agent` in `thread` (since start, or since it was forgotten). */
  knows(agent: string, thread: string): boolean {
    return this.#threads.peek(thread)?.has(agent) ?? false;
  }

  /**
   * What `agent` had used in `thread` before this tracker counted it (read from the thread's
   * history after a restart), so budget.tokens holds across restarts. Counts toward the thread
   * only: the per-agent totals (metrics) are this process's own calls.
   */
  seed(agent: string, thread: string, tokens: number): void {
    if (tokens <= 0 || this.knows(agent, thread)) return;
    this.#byAgent(thread).set(agent, { ...empty(), total_tokens: tokens });
  }

  /** The thread's table, marked most recently used; made when the thread is new. */
  #byAgent(thread: string): Map<string, UsageTotals> {
    let byAgent = this.#threads.get(thread);
    if (!byAgent) {
      byAgent = new Map();
      this.#threads.set(thread, byAgent);
    }
    return byAgent;
  }

  /** Tokens (input + output) `agent` has used in `thread`. */
  threadTokens(agent: string, thread: string): number {
    return this.#threads.peek(thread)?.get(agent)?.total_tokens ?? 0;
  }

  agent(agent: string): UsageTotals {
    return { ...(this.#agents.get(agent) ?? empty()) };
  }

  thread(thread: string): Record<string, UsageTotals> {
    const byAgent = this.#threads.peek(thread);
    return byAgent ? Object.fromEntries([...byAgent].map(([k, v]) => [k, { ...v }])) : {};
  }

  stats(): UsageStats {
    return {
      agents: Object.fromEntries([...this.#agents].map(([k, v]) => [k, { ...v }])),
      // Least recently used first, as the Map this replaced listed them.
      threads: Object.fromEntries([...this.#threads.rkeys()].map((t) => [t, this.thread(t)])),
    };
  }
}
