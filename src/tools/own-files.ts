/**
 * What the file guard keeps every file tool off for one organism, in one place for the daemon's
 * tool runtime (runtime.ts) and the test kit (src/testing/tool-runtime.ts): a tool under a user's
 * test meets the refusals it would meet deployed, and a file added here is refused in both.
 */
import { dirname, join } from 'node:path';
import { defaultAuditKeyFile } from '../audit/key.ts';
import { auditCheckpointFile } from '../audit/setup.ts';
import type { OrganismConfig } from '../config/types.ts';
import type { DaemonFileSet } from '../guard/file.ts';
import { type CodeFiles, organismCodeFiles, runtimeCodeFolders } from './code-files.ts';
import { PRIVATE_KEY_FILE, PUBLIC_KEY_FILE } from './integrity.ts';

/** Where the runtime's files are for an organism (absolute; the loader resolved them). */
export interface ToolPaths {
  dataDir: string;
  workspace: string;
  audit: string;
  revocations: string;
  manifest: string;
  privateKey: string;
  publicKey: string;
}

export function toolPaths(config: OrganismConfig): ToolPaths {
  const dataDir = config.organism.data_dir;
  const tools = (config.tools ?? {}) as Partial<OrganismConfig['tools']>;
  const audit = (config.audit ?? {}) as Partial<OrganismConfig['audit']>;
  return {
    dataDir,
    workspace: config.organism.workspace,
    audit: audit.path ?? join(dataDir, 'audit.jsonl'),
    revocations: tools.revocations_file ?? join(dataDir, 'revocations.json'),
    manifest: tools.manifest ?? join(dirname(config.file), 'tools.manifest.json'),
    privateKey: join(dataDir, PRIVATE_KEY_FILE),
    publicKey: join(dataDir, PUBLIC_KEY_FILE),
  };
}

/**
 * The runtime's own data and files (rule file.daemon_data): data_dir, the config and its .env, the
 * audit log, revocations, the manifest and signing keys, and the audit key and checkpoints. Those
 * two live outside data_dir on purpose (whoever cuts the log must not reach them); a tool must not
 * either, to read the key (and seal forged records) or to cut both. `env` is where the key's and
 * the checkpoints' default paths are read from, as the audit log reads them.
 */
export function ownDataFiles(config: OrganismConfig, env: NodeJS.ProcessEnv): DaemonFileSet {
  const paths = toolPaths(config);
  return {
    dataDirs: [paths.dataDir],
    checkpointDirs: [dirname(auditCheckpointFile(config, env))],
    files: [
      config.audit?.key_file ?? defaultAuditKeyFile(env),
      ...(config.file ? [config.file, join(dirname(config.file), '.env')] : []),
      paths.audit,
      paths.revocations,
      paths.manifest,
      paths.privateKey,
      paths.publicKey,
    ],
  };
}

/**
 * The code the organism runs (rule file.organism_code): its handlers, tool, prompt and resource
 * modules and what they import, and the code every daemon loads at its next start (the package's
 * folders, every node_modules on the way up from the project and the package).
 */
export async function ownCode(config: OrganismConfig): Promise<CodeFiles> {
  const code = await organismCodeFiles(config);
  const projectDir = config.file === undefined ? undefined : dirname(config.file);
  for (const [folder, what] of runtimeCodeFolders(projectDir))
    if (!code.folders.has(folder)) code.folders.set(folder, what);
  return code;
}
