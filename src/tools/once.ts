/**
 * Once-only effects. A message is delivered at least once: with several daemons on Redis Streams,
 * after a crash its handler runs again on another daemon; with one daemon (memory transport), the
 * bus journal queues it again at the restart. Either way the handler makes the same tool calls with
 * the same call ids. The once key comes from the call id, `<message id>.call-<n>`: the id of the message
 * being handled (kept by the journal or the stream; a message a handler sent has an id derived from
 * the id of the message that handler was handling and the output's place, so it too is the same in
 * every run) and n, the call's place in that handler run (1 for its first tool call). A
 * side-effecting tool (`sideEffect: true`: send_email, webhook, write_file, key_value_set, ...)
 * therefore records its call id before acting (SET NX with an expiry, in the runtime state store:
 * Redis, or the embedded store, fsynced, in single-daemon mode) and a repeated call is answered with
 * the first call's result instead of acting again.
 *
 * The record is out of every tool's reach (src/state): not in the key_value_* tools' store, named by
 * an HMAC of the call id under a key no tool can read (call ids are sequential, so a name that is the
 * call id could be written before the call comes), and sealed. A record that fails its seal (someone
 * with Redis access wrote it) is never returned as the call's result and does not stop the call: it
 * is reported as a threat, replaced by this call's own claim, and the call acts.
 *
 * A repeated call that finds the first one started but unfinished waits for its result (the first
 * may still be running on a slower daemon). If none comes within the tool's timeout, counted from
 * when the first run started (a live first run has its answer by then; the repeat after a failover
 * comes seconds later, and waiting a whole timeout more outlived the handler's own limit, so its
 * thread ended in a handler timeout instead of this answer), the first run died mid-way, and nobody
 * can know whether its effect happened: the call is answered with `EffectInDoubt` and not repeated,
 * so the effect happens at most once rather than twice. Never longer than the repeat's own wait
 * (daemons' clocks may differ). On the embedded store (one process) a call found started by an
 * earlier process is in doubt at once.
 *
 * A handler that must stay replayable therefore makes its tool calls in the same order each run;
 * an agent's calls follow its model's turns (see src/agent for how a resumed agent replays them).
 */
import { randomUUID } from 'node:crypto';
import { kvRedisUrl } from '../kv/index.ts';
import type { RuntimeState, StateThreat } from '../state/index.ts';
import { runtimeStateFor } from '../state/open.ts';
import type { ToolFailureCode } from './failure-codes.ts';
import type { ToolResult, ToolServices } from './types.ts';

/** Kept this long: longer than any redelivery (claim idle time times max_deliveries). */
export const EFFECT_TTL_SECONDS = 24 * 3600;
/** The runtime state space of effect records. */
export const EFFECTS_SPACE = 'effects';
/** Label of effect record names (see StateSeal.names). */
const NAME_LABEL = 'effect';
const POLL_MS = 100;

/** This process: a pending record with another owner on a one-process store is from a dead run. */
const OWNER = randomUUID();

type Record_ = { state: 'pending'; at: number; owner?: string } | { state: 'done'; result: ToolResult };

export interface EffectLogOptions {
  /** Kept this long (seconds). */
  ttlSeconds?: number;
  /**
   * The store serves one process (the embedded store, single-daemon mode): a call found started by
   * another process can only be from a run cut off by a crash, so it is in doubt at once instead of
   * after waiting for the first run's result.
   */
  oneProcess?: boolean;
}

export interface EffectLog {
  /**
   * Claims `callId`. Undefined: this caller is the first and should act, then call finish().
   * Otherwise the first call's result (or EffectInDoubt), to be returned without acting.
   */
  begin(callId: string, tool: string, waitMs: number): Promise<ToolResult | undefined>;
  finish(callId: string, result: ToolResult): Promise<void>;
}

/** The name of `callId`'s record, and the names it may have under older keys of the ring. */
export function effectNames(state: RuntimeState, callId: string): string[] {
  return state.seal.names(NAME_LABEL, callId);
}

export function stateEffectLog(state: RuntimeState, options: EffectLogOptions = {}): EffectLog {
  const ttlSeconds = options.ttlSeconds ?? EFFECT_TTL_SECONDS;
  /** Where begin() claimed or found each call's record, for finish() (a rotation may fall between). */
  const claimed = new Map<string, string>();
  const claim = async (name: string, callId: string, overwrite: boolean) => {
    const pending: Record_ = { state: 'pending', at: Date.now(), owner: OWNER };
    if (overwrite) await state.set(EFFECTS_SPACE, name, pending, ttlSeconds);
    else if (!(await state.setIfAbsent(EFFECTS_SPACE, name, pending, ttlSeconds))) return false;
    claimed.set(callId, name);
    return true;
  };
  return {
    async begin(callId, tool, waitMs) {
      const [name, ...older] = effectNames(state, callId) as [string, ...string[]];
      let at = name;
      // A record made before a key rotation is under an older name; the first found is the call's.
      for (const old of older) {
        if ((await state.get(EFFECTS_SPACE, old, tool)).found) {
          at = old;
          break;
        }
      }
      if (at === name && (await claim(name, callId, false))) return undefined;
      const deadline = Date.now() + waitMs;
      for (;;) {
        const read = await state.get(EFFECTS_SPACE, at, tool);
        // Forged (reported by the state store): not this call's result, and no reason not to act.
        if (read.found && 'forged' in read) {
          await claim(at, callId, true);
          return undefined;
        }
        // Gone meanwhile (expired, deleted): claim it again as the first.
        if (!read.found) {
          if (await claim(at, callId, false)) return undefined;
          continue;
        }
        const found = read.value as Record_;
        if (found?.state === 'done') return found.result;
        const dead = options.oneProcess === true && found?.state === 'pending' && found.owner !== OWNER;
        const firstUntil =
          found?.state === 'pending' && Number.isFinite(found.at) ? found.at + waitMs : deadline;
        if (dead || Date.now() >= Math.min(deadline, firstUntil)) {
          return {
            status: 'error',
            tool,
            error: {
              code: 'EffectInDoubt' satisfies ToolFailureCode,
              message: `${tool} call ${callId} was started before and never reported back (its daemon may have stopped mid-way); it is not repeated, so its effect happened at most once. Check whether it took place before trying again with new arguments.`,
            },
          };
        }
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
    },
    async finish(callId, result) {
      const name = claimed.get(callId) ?? (effectNames(state, callId)[0] as string);
      claimed.delete(callId);
      const done: Record_ = { state: 'done', result };
      await state.set(EFFECTS_SPACE, name, done, ttlSeconds);
    },
  };
}

/**
 * The organism's effect log, or undefined when effects need no log. Redis transport: the shared
 * state store (Redis). Memory transport with the bus journal (organism.yaml has `durability`, which
 * the loader always fills in): the embedded state store, since a message cut off by a crash runs
 * again after the restart. Without either (a bus built by hand, no journal) a message is delivered
 * once. `threat` reports a forged record when this opens the state store (no daemon opened it first).
 */
export async function effectLogFor(
  services: ToolServices,
  threat?: (threat: StateThreat) => void,
): Promise<EffectLog | undefined> {
  const config = services.config as ToolServices['config'] & { durability?: unknown };
  if (config.bus?.transport === 'redis') return stateEffectLog(await runtimeStateFor(services, threat));
  if (config.durability === undefined) return undefined;
  // kv.url may still name a Redis store shared with other daemons: then it is not one process's.
  return stateEffectLog(await runtimeStateFor(services, threat), {
    oneProcess: kvRedisUrl(config) === undefined,
  });
}
