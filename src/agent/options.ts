/**
 * Tunables of the LLM client and the agent loop, with their defaults in one place. None of them is
 * an organism.yaml key: the file sets strategy, retries, backends and per-agent limits; these are
 * for embedders and tests (which pass a `sleep` that records delays instead of waiting).
 */
export interface LlmClientOptions {
  /** Time allowed one HTTP request to a provider, ms. */
  requestTimeoutMs: number;
  /** First backoff delay, ms; doubled on each further retry. */
  backoffBaseMs: number;
  /** Largest backoff delay, ms. */
  backoffMaxMs: number;
  /** A retry-after longer than this moves on to the next backend instead of waiting, ms. */
  maxRetryAfterMs: number;
  /** Longest wait for a backend's token budget (rate_limit_tpm) before trying anyway, ms. */
  maxRateWaitMs: number;
  /** Waits `ms` (aborting early on `signal`). Tests replace it to record delays. */
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Random number in [0, 1) for jitter. */
  random: () => number;
  /** Clock for the rate limiter, ms. */
  now: () => number;
}

export function defaultLlmClientOptions(): LlmClientOptions {
  return {
    requestTimeoutMs: 120_000,
    backoffBaseMs: 500,
    backoffMaxMs: 20_000,
    maxRetryAfterMs: 60_000,
    maxRateWaitMs: 60_000,
    sleep: abortableSleep,
    random: Math.random,
    now: Date.now,
  };
}

export interface AgentLoopOptions {
  /** max_tokens asked of the model per turn. */
  maxTokensPerTurn: number;
  /** Loops (threads) an agent keeps waiting for peer replies; the oldest is dropped beyond this. */
  maxPendingLoops: number;
  /** A loop waiting this long for a peer reply is dropped, ms. */
  pendingTtlMs: number;
  /** Earlier thread messages shown to the model when a new task arrives in a known thread. */
  historyMessages: number;
  /** Bytes of earlier thread history shown at most. */
  historyBytes: number;
  /** Bytes of one tool result or peer reply shown to the model at most. */
  resultBytes: number;
}

export function defaultAgentLoopOptions(): AgentLoopOptions {
  return {
    maxTokensPerTurn: 4096,
    maxPendingLoops: 1000,
    pendingTtlMs: 600_000,
    historyMessages: 20,
    historyBytes: 16_384,
    resultBytes: 32_768,
  };
}

export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
