/** Reading the audit log back: the last N records, and a verification of the whole chain. */
import { readFile } from 'node:fs/promises';
import { AuditError } from '../errors.ts';
import { type ChainReport, verifyChain } from './chain.ts';
import type { AuditKey } from './key.ts';

async function readLog(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw new AuditError('audit.read', `cannot read the audit log ${path}: ${(error as Error).message}`, {
      path,
    });
  }
}

/** The last `tail` lines (all when undefined), as written. A missing file has no records. */
export async function readAuditLines(path: string, tail?: number): Promise<string[]> {
  const lines = (await readLog(path)).split('\n').filter((line) => line.length > 0);
  return tail === undefined ? lines : lines.slice(Math.max(0, lines.length - tail));
}

/** Verifies the whole file against `keys` (oldest first); see verifyChain for what it reports. */
export async function verifyAuditFile(path: string, keys: readonly AuditKey[] = []): Promise<ChainReport> {
  return verifyChain(await readLog(path), keys);
}
