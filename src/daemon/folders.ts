/**
 * What an organism needs on disk before any tool runs: its data_dir (private to this user) and its
 * workspace. The daemon makes them at start and `organism tools call` does the same, so the first
 * write_file or run_command of a fresh organism finds its workspace wherever it is called from.
 */
import { mkdir } from 'node:fs/promises';
import type { OrganismConfig } from '../config/types.ts';
import { ConfigError } from '../errors.ts';

export async function ensureOrganismFolders(config: OrganismConfig): Promise<void> {
  for (const [key, dir, mode] of [
    ['organism.data_dir', config.organism.data_dir, 0o700],
    ['organism.workspace', config.organism.workspace, 0o777],
  ] as const) {
    await mkdir(dir, { recursive: true, mode }).catch((error: NodeJS.ErrnoException) => {
      throw new ConfigError([
        { file: config.file, path: key, message: `cannot create ${dir}: ${error.code ?? error.message}` },
      ]);
    });
  }
}
