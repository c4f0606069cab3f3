/**
 * The daemon's runtime state store (src/state): approvals and once-only effect records, apart from
 * every tool's reach and sealed with a key derived from the audit key. One per daemon, kept across
 * reloads: it is put in the tool services' resources, where every runtime a reload builds finds it
 * (the dispatcher's effect log) and which close it at shutdown. A record that fails its seal becomes
 * a threat record in the audit log and an error in the daemon's log.
 */

import type { Logger } from 'pino';
import type { AuditKeyring } from '../audit/key.ts';
import type { AuditSink } from '../audit/log.ts';
import type { OrganismConfig } from '../config/types.ts';
import { createRuntimeState, STATE_RESOURCE_KEY } from '../state/open.ts';
import { type RuntimeState, stateThreatRecord } from '../state/store.ts';
import type { ResourceCache } from '../tools/types.ts';

export interface DaemonStateOptions {
  config: OrganismConfig;
  /** The audit keys (the daemon always has them: it creates the key file at first start). */
  keys: AuditKeyring | undefined;
  audit: AuditSink;
  logger: Pick<Logger, 'error'>;
  resources: ResourceCache;
}

export function daemonRuntimeState(options: DaemonStateOptions): RuntimeState {
  const { keys, audit, logger } = options;
  const state = createRuntimeState(options.config, {
    keys: () => keys?.keys ?? [],
    threat: (threat) => {
      audit.append(stateThreatRecord(threat));
      logger.error({ component: 'state', record: threat.record, tool: threat.tool }, threat.reason);
    },
  });
  // Registered before any runtime asks for it, so the dispatcher's effect log uses this one.
  void options.resources.get(
    STATE_RESOURCE_KEY,
    () => state,
    (s) => s.close(),
  );
  return state;
}
