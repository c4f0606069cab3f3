/**
 * Token usage per agent and per thread. The per-thread table is what `budget.tokens` is checked
 * against; it is bounded (least recently used threads are forgotten first) so a long-running daemon
 * does not grow with every thread it has ever seen.
 */
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
  /** Map order is recency order: a touched thread is moved to the end. */
  readonly #threads = new Map<string, Map<string, UsageTotals>>();

  constructor(private readonly maxThreads = 10_000) {}

  record(agent: string, thread: string, usage: TokenUsage): void {
    const totals = this.#agents.get(agent) ?? empty();
    this.#agents.set(agent, totals);
    add(totals, usage);
    let byAgent = this.#threads.get(thread);
    if (byAgent) this.#threads.delete(thread);
    else byAgent = new Map();
    this.#threads.set(thread, byAgent);
    const own = byAgent.get(agent) ?? empty();
    byAgent.set(agent, own);
    add(own, usage);
    while (this.#threads.size > this.maxThreads) {
      const oldest = this.#threads.keys().next().value as string;
      this.#threads.delete(oldest);
    }
  }

  /** Whether this tracker has counted `agent` in `thread` (since start, or since it was forgotten). */
  knows(agent: string, thread: string): boolean {
    return this.#threads.get(thread)?.has(agent) ?? false;
  }

  /**
   * What `agent` had used in `thread` before this tracker counted it (read from the thread's
   * history after a restart), so budget.tokens holds across restarts. Counts toward the thread
   * only: the per-agent totals (metrics) are this process's own calls.
   */
  seed(agent: string, thread: string, tokens: number): void {
    if (tokens <= 0 || this.knows(agent, thread)) return;
    let byAgent = this.#threads.get(thread);
    if (byAgent) this.#threads.delete(thread);
    else byAgent = new Map();
    this.#threads.set(thread, byAgent);
    byAgent.set(agent, { ...empty(), total_tokens: tokens });
    while (this.#threads.size > this.maxThreads) {
      const oldest = this.#threads.keys().next().value as string;
      this.#threads.delete(oldest);
    }
  }

  /** Tokens (input + output) `agent` has used in `thread`. */
  threadTokens(agent: string, thread: string): number {
    return this.#threads.get(thread)?.get(agent)?.total_tokens ?? 0;
  }

  agent(agent: string): UsageTotals {
    return { ...(this.#agents.get(agent) ?? empty()) };
  }

  thread(thread: string): Record<string, UsageTotals> {
    const byAgent = this.#threads.get(thread);
    return byAgent ? Object.fromEntries([...byAgent].map(([k, v]) => [k, { ...v }])) : {};
  }

  stats(): UsageStats {
    return {
      agents: Object.fromEntries([...this.#agents].map(([k, v]) => [k, { ...v }])),
      threads: Object.fromEntries([...this.#threads.keys()].map((t) => [t, this.thread(t)])),
    };
  }
}
