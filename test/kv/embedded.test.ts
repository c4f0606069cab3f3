import { spawn } from 'node:child_process';
import { appendFile, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createKvStore, type KvStore, openEmbeddedKvStore } from '../../src/kv/index.ts';
import { configIn, removeTempDirs, tempDir } from './fixtures.ts';
import { kvContract } from './kv.contract.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../..');
const dirOf = new WeakMap<KvStore, string>();

kvContract('embedded', {
  async fresh(limits) {
    const dir = await tempDir();
    const store = await openEmbeddedKvStore({ dir, ...limits });
    dirOf.set(store, dir);
    return store;
  },
  async reopen(old) {
    const dir = dirOf.get(old)!;
    const store = await openEmbeddedKvStore({ dir });
    dirOf.set(store, dir);
    return store;
  },
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('embedded kv store on disk', () => {
  const open: KvStore[] = [];
  const track = (s: KvStore) => {
    open.push(s);
    return s;
  };
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
  });
  afterAll(removeTempDirs);

  it('keeps every set that returned when its process is killed with SIGKILL mid-write', async () => {
    const dir = await tempDir();
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'child-writer.ts'), dir], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_code, signal) => resolve(signal)),
    );
    await new Promise<void>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d) => {
        out += d;
        if (out.includes('set-done')) {
          // Right away: only what set() acknowledged can be on disk by now. (The child keeps writing
          // unacknowledged noise meanwhile, so the kill may also tear a record.)
          child.kill('SIGKILL');
          resolve();
        }
      });
      child.on('exit', () => reject(new Error(`child exited before set-done: ${stderr}`)));
    });
    expect(await exited).toBe('SIGKILL');

    // The child's LOCK is stale now (its pid is dead): reopening takes it over.
    const store = track(await openEmbeddedKvStore({ dir }));
    for (let i = 0; i < 50; i++)
      expect(await store.get('child', `key-${i}`)).toEqual({ i, text: `value ${i}` });
    for (let i = 0; i < 20; i++) expect(await store.get('child', `parallel-${i}`)).toBe(i);
    expect(await store.get('child', 'overwritten')).toBe('new');
    expect(await store.get('child', 'deleted')).toBeUndefined();
    expect(await store.get('child', 'with-ttl')).toBe('lives an hour');
    // And it keeps working: a new set after the crash survives another reopen.
    await store.set('child', 'after-crash', true);
    await store.close();
    const again = track(await openEmbeddedKvStore({ dir }));
    expect(await again.get('child', 'after-crash')).toBe(true);
    expect(await again.get('child', 'key-49')).toEqual({ i: 49, text: 'value 49' });
  });

  it('drops a torn last record (a crash mid-append) and truncates the log there', async () => {
    const dir = await tempDir();
    const s = track(await openEmbeddedKvStore({ dir }));
    await s.set('ns', 'a', 1);
    await s.close();
    const log = path.join(dir, 'kv.log');
    const before = (await stat(log)).size;
    await appendFile(log, '{"o":"s","n":"ns","k":"b","e":null,"v":{"half');
    const r = track(await openEmbeddedKvStore({ dir }));
    expect(await r.get('ns', 'a')).toBe(1);
    expect(await r.get('ns', 'b')).toBeUndefined();
    expect((await stat(log)).size).toBe(before);
    await r.set('ns', 'c', 3);
    await r.close();
    const text = await readFile(log, 'utf8');
    expect(text).not.toContain('half');
    expect(
      text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).k),
    ).toEqual(['a', 'c']);
  });

  it('refuses to load a log damaged in the middle, naming the file and line', async () => {
    const dir = await tempDir();
    const s = track(await openEmbeddedKvStore({ dir }));
    await s.set('ns', 'a', 1);
    await s.close();
    const log = path.join(dir, 'kv.log');
    await appendFile(log, 'garbage\n{"o":"s","n":"ns","k":"b","e":null,"v":2}\n');
    await expect(openEmbeddedKvStore({ dir })).rejects.toMatchObject({
      code: 'kv.corrupt',
      message: expect.stringContaining(`${log}:2`),
    });
    // The failed open released its lock: after repair the store opens.
    await writeFile(log, '{"o":"s","n":"ns","k":"b","e":null,"v":2}\n');
    const r = track(await openEmbeddedKvStore({ dir }));
    expect(await r.get('ns', 'b')).toBe(2);
  });

  it('compacts the log once it outgrows the live data, losing nothing', async () => {
    const dir = await tempDir();
    const log = path.join(dir, 'kv.log');
    const s = track(await openEmbeddedKvStore({ dir, compactMinBytes: 4096 }));
    const value = 'v'.repeat(200);
    for (let i = 0; i < 300; i++) await s.set('ns', 'hot', `${i}:${value}`);
    await s.set('ns', 'cold', 'kept');
    await s.set('ns', 'ttl', 'kept with ttl', 3600);
    await s.set('ns', 'removed', 'x');
    await s.delete('ns', 'removed');
    // 300 writes of ~250 bytes would be ~75 kB without compaction.
    expect((await stat(log)).size).toBeLessThan(10_000);
    expect((await readdir(dir)).sort()).toEqual(['LOCK', 'kv.log']);
    await s.close();
    const r = track(await openEmbeddedKvStore({ dir }));
    expect(await r.get('ns', 'hot')).toBe(`299:${value}`);
    expect(await r.get('ns', 'cold')).toBe('kept');
    expect(await r.get('ns', 'ttl')).toBe('kept with ttl');
    expect(await r.get('ns', 'removed')).toBeUndefined();
  });

  it('drops keys whose ttl ran out while the store was closed', async () => {
    const dir = await tempDir();
    const s = track(await openEmbeddedKvStore({ dir }));
    await s.set('ns', 'short', 'x', 1);
    await s.set('ns', 'long', 'y', 3600);
    await s.close();
    await sleep(1200);
    const r = track(await openEmbeddedKvStore({ dir }));
    expect(await r.get('ns', 'short')).toBeUndefined();
    expect(await r.setIfAbsent('ns', 'short', 'again')).toBe(true);
    expect(await r.get('ns', 'long')).toBe('y');
  });

  it('refuses a second open of the same folder while the first is open', async () => {
    const dir = await tempDir();
    track(await openEmbeddedKvStore({ dir }));
    await expect(openEmbeddedKvStore({ dir: `${dir}/.` })).rejects.toMatchObject({ code: 'kv.locked' });
  });

  it('refuses a folder locked by another live process, and takes over a lock of a dead one', async () => {
    const dir = await tempDir();
    // Another process holds the store's lock (the socket LOCK): refused, with its pid.
    const holder = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(repoRoot, 'test/storage/support/lock-holder.ts'), dir, 'LOCK', 'hold'],
      { cwd: repoRoot, stdio: ['pipe', 'pipe', 'inherit'] },
    );
    try {
      await new Promise<void>((resolve) => holder.stdout.once('data', () => resolve()));
      await expect(openEmbeddedKvStore({ dir })).rejects.toMatchObject({
        code: 'kv.locked',
        message: expect.stringContaining(`in use by process ${holder.pid}`),
      });
    } finally {
      const gone = new Promise((r) => holder.on('exit', r));
      holder.kill('SIGKILL');
      await gone;
    }
    // Killed -9, it left its socket behind: stale, taken over.
    const s = track(await openEmbeddedKvStore({ dir }));
    await s.set('ns', 'k', 'mine now');
    expect((await stat(path.join(dir, 'LOCK'))).isSocket()).toBe(true);
    await s.close();
    expect(await readdir(dir)).toEqual(['kv.log']);
  });

  it('a LOCK file holding the pid of some live process (an older version, a dead container) blocks nothing', async () => {
    const dir = await tempDir();
    for (const pid of [1, process.ppid]) {
      await writeFile(path.join(dir, 'LOCK'), String(pid));
      const s = track(await openEmbeddedKvStore({ dir }));
      expect(await s.get('ns', 'k')).toBeUndefined();
      await s.close();
      expect(await readdir(dir)).toEqual(['kv.log']);
    }
  });

  it('createKvStore opens the embedded store in <data_dir>/kv when kv.url is not set', async () => {
    const dataDir = await tempDir();
    const s = track(await createKvStore(configIn(dataDir)));
    expect(s.kind).toBe('embedded');
    await s.set('ns', 'k', 'on disk');
    expect(await readFile(path.join(dataDir, 'kv', 'kv.log'), 'utf8')).toContain('"on disk"');
    // Agents' state is private to the daemon's user.
    expect((await stat(path.join(dataDir, 'kv', 'kv.log'))).mode & 0o777).toBe(0o600);
  });
});
