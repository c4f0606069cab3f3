/**
 * One daemon per data dir, and <data_dir>/daemon.json: what only the data dir's lock holder writes,
 * and what the CLI accepts (the lock's own answer, never a pid that happens to be alive).
 */
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  addressFilePath,
  claimDataDir,
  type DataDirClaim,
  liveDaemonAddress,
} from '../../src/server/address-file.ts';

const dataDir = () => mkdtemp(join(tmpdir(), 'organism-address-'));

const claims: DataDirClaim[] = [];
afterEach(async () => {
  for (const claim of claims.splice(0)) await claim.release();
});
async function claim(dir: string): Promise<DataDirClaim> {
  const taken = await claimDataDir(dir);
  claims.push(taken);
  return taken;
}

describe('the data dir claim and its address file', () => {
  it('gives a daemon on every interface as its loopback address', async () => {
    const dir = await dataDir();
    const held = await claim(dir);
    await held.listening('http://0.0.0.0:19203');
    expect((await liveDaemonAddress(dir))?.url).toBe('http://127.0.0.1:19203');
    expect(JSON.parse(await readFile(addressFilePath(dir), 'utf8'))).toMatchObject({
      url: 'http://127.0.0.1:19203',
      pid: process.pid,
    });
    await held.listening('http://[::]:19204');
    expect((await liveDaemonAddress(dir))?.url).toBe('http://[::1]:19204');
  });

  it('refuses a second claim with one line naming the holder; the holder keeps its file', async () => {
    const dir = await dataDir();
    const held = await claim(dir);
    await expect(claimDataDir(dir)).rejects.toMatchObject({
      code: 'lock.held',
      message: `already running, pid ${process.pid}, still starting (data_dir ${dir})`,
    });
    await held.listening('http://127.0.0.1:19205');
    const before = await readFile(addressFilePath(dir), 'utf8');
    await expect(claimDataDir(dir)).rejects.toMatchObject({
      code: 'lock.held',
      message: `already running, pid ${process.pid} at http://127.0.0.1:19205 (data_dir ${dir})`,
      details: { pid: process.pid, url: 'http://127.0.0.1:19205' },
    });
    expect(await readFile(addressFilePath(dir), 'utf8')).toBe(before);
  });

  it('unlisten and release remove only a file that is still the holder’s', async () => {
    const dir = await dataDir();
    const held = await claim(dir);
    await held.listening('http://127.0.0.1:19206');
    await held.unlisten();
    expect(await readdir(dir)).toEqual(['daemon.sock']);
    expect(await liveDaemonAddress(dir)).toBeUndefined();
    // A file someone else wrote there (by hand, say) stays.
    const other = JSON.stringify({ url: 'http://127.0.0.1:19207', pid: process.pid + 1 });
    await writeFile(addressFilePath(dir), other);
    await held.release();
    claims.splice(claims.indexOf(held), 1);
    expect(await readdir(dir)).toEqual(['daemon.json']);
    expect(await readFile(addressFilePath(dir), 'utf8')).toBe(other);
  });

  it('ignores a daemon.json nobody holds the lock for, whatever pid it names', async () => {
    const dir = await dataDir();
    for (const text of [
      '',
      'not json',
      '{"url": "ftp://x:1", "pid": 1}',
      `{"url": "http://127.0.0.1:1", "pid": -4}`,
      // A live pid (this process's, init's): not a daemon of this data dir for all that.
      `{"url": "http://127.0.0.1:1", "pid": ${process.pid}}`,
      '{"url": "http://127.0.0.1:1", "pid": 1}',
    ]) {
      await writeFile(addressFilePath(dir), text);
      expect(await liveDaemonAddress(dir), text).toBeUndefined();
    }
    expect(await liveDaemonAddress(join(dir, 'missing'))).toBeUndefined();
  });

  it('after a release the data dir can be claimed again, and nothing of a temp file is left', async () => {
    const dir = await dataDir();
    const first = await claimDataDir(dir);
    await first.listening('http://127.0.0.1:19208');
    await first.release();
    expect(await readdir(dir)).toEqual([]);
    const second = await claim(dir);
    await second.listening('http://127.0.0.1:19209');
    expect((await readdir(dir)).sort()).toEqual(['daemon.json', 'daemon.sock']);
  });
});
