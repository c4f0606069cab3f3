/**
 * organism.data_dir of a config file, read leniently: the CLI looks there for the running daemon's
 * address (`daemon.json`) even when the file has since been edited into something the loader
 * refuses, as it is before an `organism reload` that will be refused with every problem listed.
 */
import { dirname, join, resolve } from 'node:path';
import { resolveConfigPath } from './defaults.ts';
import { interpolate, loadDotEnv, mergeEnv } from './env.ts';
import { parseConfigText, readConfigText, toPlain } from './read.ts';
import { organismSchema } from './schema.ts';

/** The absolute data_dir `file` names (or the default), or undefined when the file does not even parse. */
export async function readDataDir(
  file: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string | undefined> {
  const absFile = resolve(file);
  const base = dirname(absFile);
  const text = await readConfigText(absFile, file);
  if (typeof text !== 'string') return undefined;
  const { source } = parseConfigText(text, file);
  if (!source) return undefined;
  const dotEnv = await loadDotEnv(join(base, '.env'), '.env');
  interpolate(source, mergeEnv(dotEnv.vars, env));
  let data: unknown;
  try {
    data = toPlain(source);
  } catch {
    return undefined;
  }
  return dataDirIn(data, absFile);
}

/** The absolute data_dir that `data`, the plain value of the config file `absFile`, names (or the default). */
export function dataDirIn(data: unknown, absFile: string): string {
  const base = dirname(absFile);
  const organism = (data as { organism?: { data_dir?: unknown } } | null)?.organism;
  const dir = organism?.data_dir;
  if (typeof dir === 'string' && dir !== '' && !dir.includes('${')) return resolveConfigPath(dir, base);
  return resolveConfigPath(defaultDataDir(), base);
}

function defaultDataDir(): string {
  const organism = (
    organismSchema.properties as Record<string, { properties?: Record<string, { default?: unknown }> }>
  ).organism;
  const value = organism?.properties?.data_dir?.default;
  return typeof value === 'string' ? value : '.organism';
}
