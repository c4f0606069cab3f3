/**
 * Tool runtime state that several daemons of one organism must share when the bus runs on Redis
 * (`bus.transport: redis`): rate-limit buckets, so `rate_limit: {per_minute: 10}` means ten a
 * minute for the organism rather than ten per daemon, and revocations, so `organism tools revoke`
 * on one machine refuses the tool on every daemon within seconds. Both live under the organism's
 * key prefix (`organism:{group}:`). With the memory transport none of this is used.
 *
 * Redis trouble fails closed: a limiter that cannot reach Redis throws, and the dispatcher answers
 * the call with an error rather than letting it through unlimited.
 */
import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';
import type { OrganismConfig } from '../config/types.ts';
import { SharedToolKeys } from '../redis-keys.ts';
import type { RateLimit } from './limits.ts';
import type { Revocation, Revocations } from './revocations.ts';
import type { ToolServices } from './types.ts';

const RESOURCE_KEY = 'shared-tool-state';
/** How often a daemon re-reads the shared revocations (the file watcher's promise: seconds). */
export const REVOCATION_POLL_MS = 2_000;

/** The token bucket script (lua/take-token.lua: what it takes and returns), read once. */
const TAKE_SCRIPT = readFileSync(new URL('./lua/take-token.lua', import.meta.url), 'utf8');

type Client = Redis & {
  organismTakeToken(key: string, cap: string, rate: string, ttl: string): Promise<number>;
};

export interface SharedRateLimiter {
  /** Takes one token of `key`'s bucket: 0 when allowed, else ms until a token is available. */
  take(key: string, limit: RateLimit): Promise<number>;
}

export interface SharedRevocations {
  /** The revocation in Redis as last read (at most REVOCATION_POLL_MS old). */
  get(tool: string): Revocation | undefined;
}

interface SharedState {
  limiter: SharedRateLimiter;
  revocations: SharedRevocations;
  close(): Promise<void>;
}

/** True when this organism's daemons share state through Redis. */
export function sharesState(config: Pick<OrganismConfig, 'bus'>): boolean {
  return config.bus?.transport === 'redis' && typeof config.bus.url === 'string';
}

export async function sharedRateLimiter(services: ToolServices): Promise<SharedRateLimiter | undefined> {
  return sharesState(services.config) ? (await shared(services)).limiter : undefined;
}

export async function sharedRevocations(services: ToolServices): Promise<SharedRevocations | undefined> {
  return sharesState(services.config) ? (await shared(services)).revocations : undefined;
}

function shared(services: ToolServices): Promise<SharedState> {
  return services.resources.get<SharedState>(
    RESOURCE_KEY,
    () => openSharedState(services.config),
    (state) => state.close(),
  );
}

/** ioredis is loaded here, on first use: a daemon that shares nothing through Redis never loads it. */
async function openClient(config: Pick<OrganismConfig, 'bus'>): Promise<Client> {
  const { createRedisClient } = await import('../redis-client.ts');
  const client = createRedisClient(config.bus.url!, {
    // A tool call must fail fast and clearly when Redis is down, not hang (as the kv store does).
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    commandTimeout: 5_000,
    protocol: 2,
    retryStrategy: (times) => Math.min(times * 200, 2_000),
  }) as Client;
  client.on('error', () => {}); // reported per call instead
  client.defineCommand('organismTakeToken', { numberOfKeys: 1, lua: TAKE_SCRIPT });
  return client;
}

async function openSharedState(config: Pick<OrganismConfig, 'bus'>): Promise<SharedState> {
  const keys = new SharedToolKeys(config.bus.group);
  const client = await openClient(config);
  let cache: Revocations = {};
  const refresh = async () => {
    cache = parseRevocations(await client.hgetall(keys.revocations));
  };
  await refresh().catch(() => {});
  const timer = setInterval(() => void refresh().catch(() => {}), REVOCATION_POLL_MS);
  timer.unref();
  return {
    limiter: {
      async take(key, limit) {
        const capacity = Math.max(1, limit.burst ?? limit.per_minute);
        const perMs = limit.per_minute / 60_000;
        const wait = await client.organismTakeToken(
          keys.rateBucket(key),
          String(capacity),
          String(perMs),
          String(Math.max(120_000, Math.ceil(capacity / Math.max(perMs, 1e-9)) * 2)),
        );
        return wait < 0 ? Number.POSITIVE_INFINITY : wait;
      },
    },
    revocations: {
      get: (tool) => (Object.hasOwn(cache, tool) ? cache[tool] : undefined),
    },
    async close() {
      clearInterval(timer);
      client.disconnect();
    },
  };
}

function parseRevocations(hash: Record<string, string>): Revocations {
  const out: Revocations = Object.create(null) as Revocations;
  for (const [tool, json] of Object.entries(hash)) {
    try {
      const entry = JSON.parse(json) as Partial<Revocation>;
      if (typeof entry.reason === 'string') out[tool] = { reason: entry.reason, time: entry.time ?? '' };
    } catch {
      // a hand-written value that is not ours: ignored rather than revoking on garbage
    }
  }
  return out;
}

/** `organism tools revoke` with the redis transport: every daemon of the organism refuses the tool. */
export async function revokeShared(
  config: Pick<OrganismConfig, 'bus'>,
  tool: string,
  revocation: Revocation,
): Promise<void> {
  const client = await openClient(config);
  try {
    await client.hset(new SharedToolKeys(config.bus.group).revocations, tool, JSON.stringify(revocation));
  } finally {
    client.disconnect();
  }
}

/** Returns whether the tool had a shared revocation. */
export async function unrevokeShared(config: Pick<OrganismConfig, 'bus'>, tool: string): Promise<boolean> {
  const client = await openClient(config);
  try {
    return (await client.hdel(new SharedToolKeys(config.bus.group).revocations, tool)) > 0;
  } finally {
    client.disconnect();
  }
}
