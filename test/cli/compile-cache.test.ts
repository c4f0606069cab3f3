/**
 * bin/organism.js keeps V8's compiled code of the CLI's modules in the user's cache folder
 * ($XDG_CACHE_HOME/organism/node) on a Node that has a compile cache (22.1 and later: CI's second
 * run is on Node 24), never in Node's default under the shared temp folder; on Node 20 there is
 * none and nothing is written.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import module from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ORGANISM_BIN } from '../helpers/daemon.ts';

const run = promisify(execFile);
const hasCompileCache = typeof (module as { enableCompileCache?: unknown }).enableCompileCache === 'function';

/** Runs `organism --help` with its own XDG_CACHE_HOME and TMPDIR; returns both folders. */
async function helpWithCache(): Promise<{ cacheHome: string; temp: string }> {
  const cacheHome = await mkdtemp(join(tmpdir(), 'organism-cache-home-'));
  const temp = await mkdtemp(join(tmpdir(), 'organism-temp-'));
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_CACHE_HOME: cacheHome, TMPDIR: temp };
  delete env.NODE_COMPILE_CACHE;
  delete env.NODE_DISABLE_COMPILE_CACHE;
  await run(process.execPath, [ORGANISM_BIN, '--help'], { env });
  return { cacheHome, temp };
}

describe('the compile cache', { timeout: 30_000 }, () => {
  it.runIf(hasCompileCache)("is kept in the user's cache folder, not under the temp folder", async () => {
    const { cacheHome, temp } = await helpWithCache();
    const dir = join(cacheHome, 'organism', 'node');
    expect(existsSync(dir) && readdirSync(dir, { recursive: true }).length > 0).toBe(true);
    expect(readdirSync(temp)).toEqual([]);
  });

  it.skipIf(hasCompileCache)('is not there on a Node without one: nothing is written', async () => {
    const { cacheHome, temp } = await helpWithCache();
    expect(readdirSync(cacheHome)).toEqual([]);
    expect(readdirSync(temp)).toEqual([]);
  });
});
