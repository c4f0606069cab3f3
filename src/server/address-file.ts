/**
 * `<data_dir>/daemon.json`: where the running daemon listens, so the CLI finds it after
 * `organism run --port 19203` or `--port 0` (see resolveTarget in client.ts). Written once the HTTP
 * server is listening (the real bound port), removed at a clean shutdown; a file left by a daemon
 * that died is recognized by its pid and ignored.
 */
import { readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { alive } from '../kv/lock.ts';

export const ADDRESS_FILE = 'daemon.json';

export interface DaemonAddress {
  url: string;
  pid: number;
  started: string;
}

export function addressFilePath(dataDir: string): string {
  return join(dataDir, ADDRESS_FILE);
}

/** Writes the address (atomically: a reader never sees half a file). */
export async function writeAddressFile(dataDir: string, url: string, pid = process.pid): Promise<void> {
  const file = addressFilePath(dataDir);
  const address: DaemonAddress = { url: reachable(url), pid, started: new Date().toISOString() };
  const temp = `${file}.${pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(address)}\n`, { mode: 0o644 });
  await rename(temp, file);
}

/** Removes the file if it is still this daemon's (another may have started on the same data_dir since). */
export async function removeAddressFile(dataDir: string, url: string, pid = process.pid): Promise<void> {
  const file = addressFilePath(dataDir);
  const current = await readAddress(file);
  if (current?.pid !== pid || current.url !== reachable(url)) return;
  await unlink(file).catch(() => {});
}

/** The address of a daemon alive now, or undefined (no file, unreadable, or its process is gone). */
export async function liveDaemonAddress(dataDir: string): Promise<DaemonAddress | undefined> {
  const address = await readAddress(addressFilePath(dataDir));
  return address && alive(address.pid) ? address : undefined;
}

async function readAddress(file: string): Promise<DaemonAddress | undefined> {
  let data: unknown;
  try {
    data = JSON.parse(await readFile(file, 'utf8'));
  } catch {
    return undefined;
  }
  const { url, pid, started } = (data ?? {}) as Partial<DaemonAddress>;
  if (typeof url !== 'string' || !/^https?:\/\//.test(url)) return undefined;
  if (typeof pid !== 'number' || !Number.isInteger(pid) || pid <= 0) return undefined;
  return { url, pid, started: typeof started === 'string' ? started : '' };
}

/** A daemon on every interface (0.0.0.0, ::) is reached on this machine's loopback. */
export function reachable(url: string): string {
  const parsed = new URL(url);
  if (parsed.hostname === '0.0.0.0') parsed.hostname = '127.0.0.1';
  else if (parsed.hostname === '[::]') parsed.hostname = '[::1]';
  return parsed.origin;
}
