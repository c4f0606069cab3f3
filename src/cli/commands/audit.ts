/**
 * `organism audit [--tail N] [--verify] [--acknowledge] [--rotate-key]`: prints the audit log,
 * checks its keyed chain and its checkpoints with the organism's audit key(s), accepts a change an
 * operator has looked at, or rotates the key.
 */
import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import { dirname, resolve } from 'node:path';
import type { ChainReport } from '../../audit/chain.ts';
import {
  type AuditKeyOptions,
  type AuditKeyring,
  auditKeyOptions,
  DEFAULT_AUDIT_KEY_ENV,
  defaultAuditKeyFile,
  loadAuditKeys,
  rotateAuditKeyFile,
} from '../../audit/key.ts';
import { AuditLog } from '../../audit/log.ts';
import { readAuditLines } from '../../audit/read.ts';
import { auditCheckpointFile, auditCheckpointOptions } from '../../audit/setup.ts';
import { type FullReport, verifyAuditLog } from '../../audit/verify.ts';
import { loadConfig } from '../../config/index.ts';
import type { OrganismConfig } from '../../config/types.ts';
import { UsageError } from '../../errors.ts';
import { toolPaths } from '../../tools/own-files.ts';
import { CONFIG_OPTION, parseCommandArgs } from '../args.ts';
import type { CommandIo } from '../io.ts';

export const summary =
  'print the tool-call audit log; --verify checks its keyed chain and checkpoints (exit 1 unless every record is proven)';

const HELP = `usage: organism audit [--tail N] [--verify] [--acknowledge [--reason TEXT]] [--rotate-key]
                      [--config FILE] [--file PATH]

Prints the audit log (one JSON record per line: tool calls, threats, changes), oldest first.

options:
  -n, --tail N        only the last N records
      --verify        check every record's HMAC-SHA256 seal and link with the audit key(s)
                      (audit.key_env, default $${DEFAULT_AUDIT_KEY_ENV}, else audit.key_file, default
                      ${defaultAuditKeyFile()}); exits 0 only when every record is proven,
                      1 naming the first bad line, or when the log carries no key at all;
                      and against its checkpoints (audit.checkpoint_dir): exit 1 when the log
                      is missing, another log, cut from its end or in the middle, or a writer
                      found it changed and nobody acknowledged it yet
      --acknowledge   after checking a change: accept the log as it is now (a change record
                      and a checkpoint say who and why); tool calls run again (the daemon
                      notices within a second)
      --reason TEXT   with --acknowledge: why (an incident number, what was found)
      --rotate-key    append a fresh key to the key file: new records are sealed with it, the old
                      keys stay to verify older ones (restart the daemon to switch it over)
  -c, --config FILE   organism.yaml whose audit settings to use (default ./organism.yaml)
      --file PATH     read this audit file instead of the configured one
  -h, --help          show this help

examples:
  npx organism audit --tail 20
  npx organism audit --verify
  npx organism audit --acknowledge --reason "INC-42: restored from backup"`;

export async function run(argv: string[], io: CommandIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    argv,
    {
      ...CONFIG_OPTION,
      tail: { type: 'string', short: 'n' },
      verify: { type: 'boolean' },
      acknowledge: { type: 'boolean' },
      reason: { type: 'string' },
      'rotate-key': { type: 'boolean' },
      file: { type: 'string' },
    },
    false,
  );
  if (values.help) {
    io.out(HELP);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  let tail: number | undefined;
  if (values.tail !== undefined) {
    if (!/^\d+$/.test(values.tail))
      throw new UsageError(`--tail must be a whole number, not '${values.tail}'`);
    tail = Number(values.tail);
  }
  if (!values.verify && !values['rotate-key'] && !values.acknowledge) {
    const path =
      values.file ?? toolPaths((await loadConfig(values.config, { loadModules: false })).config).audit;
    for (const line of await readAuditLines(path, tail)) io.out(line);
    return 0;
  }
  const { path, keyOptions, config, env } = await settings(values.config, values.file);
  if (values['rotate-key']) {
    const ring = await loadAuditKeys(keyOptions);
    if (!ring) {
      io.err(
        `no audit key file ${keyOptions.keyFile ?? defaultAuditKeyFile(keyOptions.env)} yet: the daemon creates it at first start`,
      );
      return 1;
    }
    const { from, to } = await rotateAuditKeyFile(ring);
    io.out(
      `rotated the audit key in ${ring.source}: ${from} -> ${to}. Older keys stay in the file to verify older records; restart the daemon to seal new records with ${to}.`,
    );
    return 0;
  }
  const ring = await loadAuditKeys(keyOptions);
  if (values.acknowledge) return acknowledge(config, env, ring, values.reason, io);
  // Checkpoints are the configured log's: a copy elsewhere (--file) is checked as a chain only.
  const ownLog = config !== undefined && resolve(path) === resolve(toolPaths(config).audit);
  const report = await verifyAuditLog({
    log: path,
    checkpoints: ownLog ? auditCheckpointFile(config, env) : undefined,
    organism: config?.organism.name ?? '',
    keys: ring?.keys ?? [],
  });
  return printReport(path, report, ring, keyOptions, io);
}

async function acknowledge(
  config: OrganismConfig | undefined,
  env: NodeJS.ProcessEnv,
  ring: AuditKeyring | undefined,
  reason: string | undefined,
  io: CommandIo,
): Promise<number> {
  if (!config) throw new UsageError('--acknowledge needs the organism.yaml of the log (--config FILE)');
  if (!ring) {
    io.err('no audit key found: acknowledging writes a sealed checkpoint and needs the key the daemon uses');
    return 1;
  }
  const log = new AuditLog({
    path: toolPaths(config).audit,
    keys: ring,
    checkpoints: auditCheckpointOptions(config, { env }),
  });
  const by = `${userInfo().username} (organism audit --acknowledge)`;
  try {
    const { was, checkpoint } = await log.acknowledge(by, reason ?? 'acknowledged by an operator');
    io.out(
      `acknowledged${was ? `: ${was}` : ''}. From here on ${checkpoint.records > 0 ? `the log as it is now (${checkpoint.records} records, log id ${checkpoint.log_id})` : 'a new log'} is the reference (checkpoint ${checkpoint.seq} in ${log.checkpointFile}); tool calls run again (a running daemon notices within a second).`,
    );
    return 0;
  } finally {
    await log.close();
  }
}

/** The audit file and where its keys are: from the config, or with --file and no config, the defaults. */
async function settings(
  configFile: string,
  file: string | undefined,
): Promise<{
  path: string;
  keyOptions: AuditKeyOptions;
  config: OrganismConfig | undefined;
  env: NodeJS.ProcessEnv;
}> {
  // `--file` with no organism.yaml at hand (a copy of a log elsewhere): the default key places.
  if (file !== undefined && !existsSync(configFile))
    return {
      path: file,
      keyOptions: { dataDir: dirname(file), env: process.env },
      config: undefined,
      env: process.env,
    };
  // audit.key_env may be set in the .env beside organism.yaml: the loaded env has it.
  const { config, env } = await loadConfig(configFile, { loadModules: false });
  return {
    path: file ?? toolPaths(config).audit,
    keyOptions: auditKeyOptions(config, { env }),
    config,
    env,
  };
}

function printReport(
  path: string,
  full: FullReport,
  ring: AuditKeyring | undefined,
  keyOptions: AuditKeyOptions,
  io: CommandIo,
): number {
  const report: ChainReport = full.chain;
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  for (const problem of full.problems) io.err(problem);
  const keySource =
    ring?.source ??
    `no key found (${keyOptions.keyEnv ?? DEFAULT_AUDIT_KEY_ENV} unset, no ${keyOptions.keyFile ?? defaultAuditKeyFile(keyOptions.env)})`;
  if (report.verdict === 'broken') {
    io.err(
      `${path}:${report.line}: record ${report.line} ${report.reason}; the ${plural(report.records, 'record')} before it verify`,
    );
    io.err(`keys: ${ring ? `${ring.keys.map((k) => k.id).join(', ')} from ${keySource}` : keySource}`);
    return 1;
  }
  if (full.problems.length > 0) {
    io.err(
      `${path}: not proven (${plural(report.records, 'record')} chained; keys ${ring ? ring.keys.map((k) => k.id).join(', ') : keySource})`,
    );
    return 1;
  }
  if (report.verdict === 'unkeyed') {
    const sealed =
      report.keyed > 0
        ? ` Records ${report.unkeyed + 1}-${report.records} are sealed with key ${report.keys.join(', then ')} and verify.`
        : '';
    io.err(
      `UNKEYED: ${path}: records 1-${report.unkeyed} of ${report.records} link by plain SHA-256 but carry no audit key, so they are not proven: they were written before audit keys, or rewritten by someone without the key.${sealed} Move a log from before audit keys aside once (e.g. to audit-before-keys.jsonl) so the new one is proven from its first record.`,
    );
    return 1;
  }
  if (report.records === 0) {
    io.out(`ok: ${path}: 0 records`);
    for (const note of full.notes) io.out(note);
    return 0;
  }
  io.out(
    `ok: ${path}: ${plural(report.records, 'record')}, hash chain intact: ${report.keyed} sealed with HMAC-SHA256 under key ${report.keys.join(', then ')} (from ${keySource})`,
  );
  const last = full.last;
  io.out(
    last
      ? `last record: ${report.records}, hash ${report.head}; log id ${last.log_id} of organism '${last.organism}', ${plural(full.checkpoints, 'checkpoint')} agree (the last at ${last.time}, ${plural(last.records, 'record')})`
      : `last record: ${report.records}, hash ${report.head}; no checkpoints to compare (records cut from the end would leave no trace)`,
  );
  for (const note of full.notes) io.out(note);
  return 0;
}
