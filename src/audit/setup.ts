/** The audit log's checkpoint settings as an organism's config gives them (daemon, tools call, verify). */
import { join } from 'node:path';
import type { OrganismConfig } from '../config/types.ts';
import { checkpointFile } from './checkpoint.ts';
import type { AuditCheckpointOptions } from './log.ts';

type AuditConfig = {
  organism: { name: string; data_dir: string };
  audit?: Partial<OrganismConfig['audit']>;
};

/** The audit log's path: audit.path, else <data_dir>/audit.jsonl. */
export function auditLogPath(config: AuditConfig): string {
  return config.audit?.path ?? join(config.organism.data_dir, 'audit.jsonl');
}

/** The checkpoint file of the organism's audit log (see checkpoint.ts for where and why). */
export function auditCheckpointFile(config: AuditConfig, env: NodeJS.ProcessEnv = process.env): string {
  return checkpointFile({
    logPath: auditLogPath(config),
    organism: config.organism.name,
    dir: config.audit?.checkpoint_dir,
    keyFile: config.audit?.key_file,
    env,
  });
}

export function auditCheckpointOptions(
  config: AuditConfig,
  options: { env?: NodeJS.ProcessEnv; report?: AuditCheckpointOptions['report'] } = {},
): AuditCheckpointOptions {
  const audit = config.audit ?? {};
  return {
    file: auditCheckpointFile(config, options.env),
    organism: config.organism.name,
    ...(audit.checkpoint_every === undefined ? {} : { everyRecords: audit.checkpoint_every }),
    ...(audit.checkpoint_interval_ms === undefined ? {} : { intervalMs: audit.checkpoint_interval_ms }),
    ...(audit.on_change === undefined ? {} : { onChange: audit.on_change }),
    ...(options.report ? { report: options.report } : {}),
  };
}
