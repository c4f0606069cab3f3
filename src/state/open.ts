/**
 * Where the runtime state lives and how a daemon (or a runtime built without one) gets it.
 *
 * It follows the tools' kv backend choice (kv.url, else bus.url with the Redis transport, else
 * embedded), because that is what decides whether several daemons share it, but it is never the
 * same store: embedded, `<data_dir>/state` (the tools' store is `<data_dir>/kv`); Redis, the
 * organism's own key space `organism:{<bus.group>}:state:` (the tools' keys are `organism:kv:...`).
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { type AuditKey, auditKeyId, auditKeyOptions, loadAuditKeys } from '../audit/key.ts';
import type { OrganismConfig } from '../config/types.ts';
import { redisAddress } from '../kv/address.ts';
import { openEmbeddedKvStore } from '../kv/embedded.ts';
import { type KvConfig, kvRedisUrl } from '../kv/index.ts';
import { organismStatePrefix } from '../redis-keys.ts';
import type { ToolServices } from '../tools/types.ts';
import { type StateKeys, StateSeal } from './seal.ts';
import { RuntimeState, type StateThreat } from './store.ts';

/** Key of the organism's one RuntimeState in ToolServices.resources (closed with them). */
export const STATE_RESOURCE_KEY = 'runtime-state';
/** The embedded state store's folder in data_dir. */
export const STATE_FOLDER = 'state';

export type StateConfig = KvConfig & Partial<Pick<OrganismConfig, 'bus'>>;

export type StateLocation =
  | { kind: 'embedded'; dir: string }
  | { kind: 'redis'; url: string; prefix: string };

export function stateLocation(config: StateConfig): StateLocation {
  const url = kvRedisUrl(config);
  if (url === undefined) return { kind: 'embedded', dir: join(config.organism.data_dir, STATE_FOLDER) };
  const group = config.bus?.group ?? config.organism.name;
  return { kind: 'redis', url, prefix: organismStatePrefix(group) };
}

/** "redis 127.0.0.1:6379 organism:{g}:state:" or "embedded /var/lib/organism/state", with no secret. */
export function describeStateLocation(config: StateConfig): string {
  const where = stateLocation(config);
  return where.kind === 'embedded'
    ? `embedded ${where.dir}`
    : `redis ${redisAddress(where.url)} ${where.prefix}`;
}

export interface CreateRuntimeStateOptions {
  /** The audit keys (live: a rotation applies at once). */
  keys: StateKeys;
  threat?: (threat: StateThreat) => void;
}

/** The organism's state store; nothing is opened until it is first used. The caller closes it. */
export function createRuntimeState(config: StateConfig, options: CreateRuntimeStateOptions): RuntimeState {
  const where = stateLocation(config);
  const open =
    where.kind === 'embedded'
      ? () => openEmbeddedKvStore({ dir: where.dir })
      : async () =>
          (await import('../kv/redis.ts')).openRedisKvStore({ url: where.url, keyPrefix: where.prefix });
  return new RuntimeState({
    open,
    seal: new StateSeal(options.keys),
    ...(options.threat ? { threat: options.threat } : {}),
  });
}

/**
 * The organism's RuntimeState from its services. The daemon puts its own there first (sealed with
 * its audit keys, threats audited and logged); a runtime built without one (`organism tools call`,
 * the testing kit, tests) gets one sealed with the organism's audit keys when they exist, else with a
 * key of this process only (it writes no key file; records it seals mean nothing to another process).
 */
export function runtimeStateFor(
  services: Pick<ToolServices, 'config' | 'resources' | 'env'>,
  threat?: (threat: StateThreat) => void,
): Promise<RuntimeState> {
  return services.resources.get<RuntimeState>(
    STATE_RESOURCE_KEY,
    async () => {
      const config = services.config;
      const ring = await loadAuditKeys(
        auditKeyOptions(config, { ...(services.env ? { env: services.env } : {}), create: false }),
      ).catch(() => undefined);
      const keys = ring ? () => ring.keys : processOnlyKeys();
      return createRuntimeState(config, { keys, ...(threat ? { threat } : {}) });
    },
    (state) => state.close(),
  );
}

/** One per process, so every runtime of this process (two test "daemons" on one Redis) agrees. */
let processKeys: readonly AuditKey[] | undefined;

function processOnlyKeys(): StateKeys {
  if (!processKeys) {
    const secret = randomBytes(32);
    processKeys = [{ id: auditKeyId(secret), secret }];
  }
  const keys = processKeys;
  return () => keys;
}
