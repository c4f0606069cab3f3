/**
 * Once-only effects. With several daemons on Redis Streams a message is delivered at least once:
 * after a crash, its handler runs again on another daemon and makes the same tool calls with the
 * same call ids (the bus derives them from the message id and the call's place in the run). A
 * side-effecting tool (`sideEffect: true`: send_email, webhook, write_file, key_value_set, ...)
 * therefore records its call id before acting (SET NX with an expiry, through the kv store, which is
 * Redis then) and a repeated call is answered with the first call's result instead of acting again.
 *
 * A repeated call that finds the first one started but unfinished waits for its result (the first
 * may still be running on a slower daemon). If none comes within the tool's timeout the first run
 * died mid-way, and nobody can know whether its effect happened: the call is answered with
 * `EffectInDoubt` and not repeated, so the effect happens at most once rather than twice.
 */
import { sharedKvStore } from '../kv/index.ts';
import type { KvStore } from '../kv/types.ts';
import type { ToolResult, ToolServices } from './types.ts';

/** Kept this long: longer than any redelivery (claim idle time times max_deliveries). */
export const EFFECT_TTL_SECONDS = 24 * 3600;
const NAMESPACE = 'effects';
const POLL_MS = 100;

type Record_ = { state: 'pending'; at: number } | { state: 'done'; result: ToolResult };

export interface EffectLog {
  /**
   * Claims `callId`. Undefined: this caller is the first and should act, then call finish().
   * Otherwise the first call's result (or EffectInDoubt), to be returned without acting.
   */
  begin(callId: string, tool: string, waitMs: number): Promise<ToolResult | undefined>;
  finish(callId: string, result: ToolResult): Promise<void>;
}

export function kvEffectLog(store: KvStore, ttlSeconds = EFFECT_TTL_SECONDS): EffectLog {
  return {
    async begin(callId, tool, waitMs) {
      const pending: Record_ = { state: 'pending', at: Date.now() };
      if (await store.setIfAbsent(NAMESPACE, callId, pending, ttlSeconds)) return undefined;
      const deadline = Date.now() + waitMs;
      for (;;) {
        const found = (await store.get(NAMESPACE, callId)) as Record_ | undefined;
        if (found?.state === 'done') return found.result;
        if (Date.now() >= deadline) {
          return {
            status: 'error',
            tool,
            error: {
              code: 'EffectInDoubt',
              message: `${tool} call ${callId} was started before and never reported back (its daemon may have stopped mid-way); it is not repeated, so its effect happened at most once. Check whether it took place before trying again with new arguments.`,
            },
          };
        }
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
    },
    async finish(callId, result) {
      const done: Record_ = { state: 'done', result };
      await store.set(NAMESPACE, callId, done, ttlSeconds);
    },
  };
}

/**
 * The organism's effect log, or undefined when effects need no log: with the in-memory transport a
 * message is delivered once, in one process, so its calls cannot repeat.
 */
export async function effectLogFor(services: ToolServices): Promise<EffectLog | undefined> {
  if (services.config.bus?.transport !== 'redis') return undefined;
  return kvEffectLog(await sharedKvStore(services));
}
