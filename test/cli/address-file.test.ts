/** <data_dir>/daemon.json: what the daemon writes for the CLI, and what the CLI accepts from it. */
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  addressFilePath,
  liveDaemonAddress,
  removeAddressFile,
  writeAddressFile,
} from '../../src/server/address-file.ts';

const dataDir = () => mkdtemp(join(tmpdir(), 'organism-address-'));

describe('the daemon address file', () => {
  it('gives a daemon on every interface as its loopback address', async () => {
    const dir = await dataDir();
    await writeAddressFile(dir, 'http://0.0.0.0:19203');
    expect((await liveDaemonAddress(dir))?.url).toBe('http://127.0.0.1:19203');
    await writeAddressFile(dir, 'http://[::]:19204');
    expect((await liveDaemonAddress(dir))?.url).toBe('http://[::1]:19204');
  });

  it('is removed only by the daemon that wrote it (same pid and address)', async () => {
    const dir = await dataDir();
    await writeAddressFile(dir, 'http://127.0.0.1:19205');
    await removeAddressFile(dir, 'http://127.0.0.1:19206');
    await removeAddressFile(dir, 'http://127.0.0.1:19205', process.pid + 1);
    expect((await liveDaemonAddress(dir))?.pid).toBe(process.pid);
    await removeAddressFile(dir, 'http://127.0.0.1:19205');
    expect(await liveDaemonAddress(dir)).toBeUndefined();
  });

  it('ignores a file that is not what the daemon writes', async () => {
    const dir = await dataDir();
    for (const text of [
      '',
      'not json',
      '{"url": "ftp://x:1", "pid": 1}',
      `{"url": "http://127.0.0.1:1", "pid": -4}`,
    ]) {
      await writeFile(addressFilePath(dir), text);
      expect(await liveDaemonAddress(dir), text).toBeUndefined();
    }
    expect(await liveDaemonAddress(join(dir, 'missing'))).toBeUndefined();
    // Nothing of a temp file is left beside it.
    await writeAddressFile(dir, 'http://127.0.0.1:19207');
    expect(JSON.parse(await readFile(addressFilePath(dir), 'utf8'))).toMatchObject({ pid: process.pid });
    expect(await readdir(dir)).toEqual(['daemon.json']);
  });
});
