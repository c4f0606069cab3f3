/**
 * The embedded key/value store: the default when organism.yaml has no `kv.url`.
 *
 * Layout in `dir`: `kv.log` (append-only, one JSON record per line), `LOCK` (the owner's lock
 * socket, see lock.ts).
 *
 * Why an append-only log rather than one file per namespace rewritten by temp + fsync + rename:
 * a set costs one small append and one fdatasync however large the namespace is, and concurrent
 * sets share one fsync (group commit below). Rewriting a namespace file would make every set cost
 * the whole namespace. The price is that the log grows, so it is compacted (rewritten with only
 * the live entries, via temp + fsync + rename) once it is both over `compactMinBytes` and more
 * than `compactRatio` times the live data.
 *
 * Durability: set()/delete() resolve only after the record is fdatasync'ed, so a `kill -9` after
 * they return loses nothing. A crash mid-append leaves at most a torn last line; loading drops it
 * and truncates the file there. A bad line followed by good ones is real corruption: loading stops
 * with `kv.corrupt` naming the line rather than silently losing data.
 *
 * Every live value is also held in memory (as JSON text), so reads never touch the disk; this store
 * is meant for the modest data of one daemon. Several daemons sharing data use Redis.
 */
import type { FileHandle } from 'node:fs/promises';
import { mkdir, open, readFile, rename, rm, truncate } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { KvError } from '../errors.ts';
import type { DirLock } from '../storage/dir-lock.ts';
import { acquireLock } from './lock.ts';
import {
  checkKey,
  checkNamespace,
  checkTtl,
  DEFAULT_MAX_VALUE_BYTES,
  encodeValue,
  type KvStore,
} from './types.ts';

export interface EmbeddedKvOptions {
  /** Folder holding the log; created when missing. */
  dir: string;
  /** Largest JSON value in bytes. Default 16 MiB. */
  maxValueBytes?: number;
  /** The log is never compacted below this size. Default 8 MiB. */
  compactMinBytes?: number;
  /** Compact when the log is more than this many times the live data. Default 2. */
  compactRatio?: number;
}

function defaultOptions(options: EmbeddedKvOptions): Required<EmbeddedKvOptions> {
  const resolved = {
    maxValueBytes: DEFAULT_MAX_VALUE_BYTES,
    compactMinBytes: 8 * 1024 * 1024,
    compactRatio: 2,
    ...options,
    dir: resolve(options.dir),
  };
  if (!(resolved.maxValueBytes > 0)) throw new RangeError('maxValueBytes must be positive');
  if (!(resolved.compactMinBytes >= 0)) throw new RangeError('compactMinBytes must be 0 or more');
  if (!(resolved.compactRatio > 1)) throw new RangeError('compactRatio must be more than 1');
  return resolved;
}

const LOG = 'kv.log';
/** Agents' state may be private: readable by the daemon's user only. */
const FILE_MODE = 0o600;

interface Entry {
  json: string;
  /** Expiry as epoch milliseconds. */
  exp: number | undefined;
  /** Bytes of this entry's log line, for the compaction ratio. */
  size: number;
}

interface PendingWrite {
  line: string;
  resolve: () => void;
  reject: (err: Error) => void;
}

/** Opens (and loads) the store in `options.dir`. One store per folder at a time. */
export async function openEmbeddedKvStore(options: EmbeddedKvOptions): Promise<KvStore> {
  const opts = defaultOptions(options);
  await mkdir(opts.dir, { recursive: true }).catch((err) => {
    throw ioError(`cannot create the kv folder ${opts.dir}`, err);
  });
  const lock = await acquireLock(opts.dir);
  try {
    const store = new EmbeddedKvStore(opts, lock);
    await store.load();
    return store;
  } catch (err) {
    await lock.release();
    throw err;
  }
}

class EmbeddedKvStore implements KvStore {
  readonly kind = 'embedded' as const;
  readonly #opts: Required<EmbeddedKvOptions>;
  readonly #path: string;
  readonly #lock: DirLock;
  readonly #data = new Map<string, Map<string, Entry>>();
  #fh: FileHandle | undefined;
  #logBytes = 0;
  #liveBytes = 0;
  #pending: PendingWrite[] = [];
  #flushing: Promise<void> | undefined;
  #failed: KvError | undefined;
  #closed: Promise<void> | undefined;
  #nextCompactCheck = 0;
  #writesSinceSweep = 0;

  constructor(opts: Required<EmbeddedKvOptions>, lock: DirLock) {
    this.#opts = opts;
    this.#lock = lock;
    this.#path = join(opts.dir, LOG);
  }

  async load(): Promise<void> {
    await rm(`${this.#path}.compact`, { force: true });
    let text: Buffer;
    let created = false;
    try {
      text = await readFile(this.#path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw ioError(`cannot read ${this.#path}`, err);
      text = Buffer.alloc(0);
      created = true;
    }
    const goodBytes = this.#replay(text);
    if (goodBytes < text.length) {
      // A torn tail from a crash mid-append: never acknowledged, so dropping it loses nothing.
      await truncate(this.#path, goodBytes);
    }
    this.#fh = await open(this.#path, 'a', FILE_MODE);
    if (goodBytes < text.length) await this.#fh.datasync();
    if (created) await syncDir(this.#opts.dir);
    this.#logBytes = goodBytes;
    this.#nextCompactCheck = this.#opts.compactMinBytes;
    await this.#maybeCompact();
  }

  /** Applies the log to memory; returns how many leading bytes hold whole, valid records. */
  #replay(text: Buffer): number {
    const now = Date.now();
    let offset = 0;
    let line = 0;
    let badAt: { line: number; offset: number } | undefined;
    while (offset < text.length) {
      const nl = text.indexOf(10, offset);
      line++;
      const end = nl === -1 ? text.length : nl + 1;
      const record = nl === -1 ? undefined : parseRecord(text.subarray(offset, nl).toString('utf8'));
      if (record === undefined) {
        badAt ??= { line, offset };
      } else if (badAt) {
        throw new KvError(
          'kv.corrupt',
          `${this.#path}:${badAt.line}: unreadable record followed by valid ones; the log is damaged (move it aside to start empty)`,
          { file: this.#path, line: badAt.line },
        );
      } else if (record.o === 's') {
        if (record.e === null || record.e > now) {
          this.#put(record.n, record.k, JSON.stringify(record.v), record.e ?? undefined, end - offset);
        } else this.#remove(record.n, record.k);
      } else {
        this.#remove(record.n, record.k);
      }
      offset = end;
    }
    return badAt ? badAt.offset : text.length;
  }

  async get(namespace: string, key: string): Promise<unknown | undefined> {
    this.#usable();
    const entry = this.#live(checkNamespace(namespace), checkKey(key));
    return entry === undefined ? undefined : JSON.parse(entry.json);
  }

  async set(namespace: string, key: string, value: unknown, ttlSeconds?: number): Promise<void> {
    await this.#write(namespace, key, value, ttlSeconds, false);
  }

  async setIfAbsent(namespace: string, key: string, value: unknown, ttlSeconds?: number): Promise<boolean> {
    return this.#write(namespace, key, value, ttlSeconds, true);
  }

  async delete(namespace: string, key: string): Promise<boolean> {
    this.#usable();
    const ns = checkNamespace(namespace);
    const k = checkKey(key);
    if (this.#live(ns, k) === undefined) return false;
    this.#remove(ns, k);
    await this.#append(`{"o":"d","n":${JSON.stringify(ns)},"k":${JSON.stringify(k)}}\n`);
    return true;
  }

  close(): Promise<void> {
    this.#closed ??= (async () => {
      // Let acknowledged-to-be writes finish: close() must not turn a pending set into a lost one.
      while (this.#flushing) await this.#flushing;
      await this.#fh?.close().catch(() => {});
      this.#fh = undefined;
      await this.#lock.release();
    })();
    return this.#closed;
  }

  async #write(
    namespace: string,
    key: string,
    value: unknown,
    ttlSeconds: number | undefined,
    onlyIfAbsent: boolean,
  ): Promise<boolean> {
    this.#usable();
    const ns = checkNamespace(namespace);
    const k = checkKey(key);
    const ttl = checkTtl(ttlSeconds);
    const json = encodeValue(value, this.#opts.maxValueBytes);
    // Memory changes synchronously, before the append, so two concurrent setIfAbsent calls cannot
    // both see the key absent. If the append fails the store is poisoned (see drain), so memory
    // never serves a value the disk silently lacks for long.
    if (onlyIfAbsent && this.#live(ns, k) !== undefined) return false;
    const exp = ttl === undefined ? undefined : Date.now() + ttl * 1000;
    const line = `{"o":"s","n":${JSON.stringify(ns)},"k":${JSON.stringify(k)},"e":${exp ?? null},"v":${json}}\n`;
    this.#put(ns, k, json, exp, Buffer.byteLength(line));
    this.#sweepNow();
    await this.#append(line);
    return true;
  }

  #usable(): void {
    if (this.#closed) throw new KvError('kv.closed', 'the kv store is closed');
    if (this.#failed) throw this.#failed;
  }

  #live(ns: string, key: string): Entry | undefined {
    const entry = this.#data.get(ns)?.get(key);
    if (entry?.exp !== undefined && entry.exp <= Date.now()) {
      // Expired: forget it. No log record needed; loading drops expired entries too.
      this.#remove(ns, key);
      return undefined;
    }
    return entry;
  }

  #put(ns: string, key: string, json: string, exp: number | undefined, size: number): void {
    let space = this.#data.get(ns);
    if (!space) {
      space = new Map();
      this.#data.set(ns, space);
    }
    const old = space.get(key);
    if (old) this.#liveBytes -= old.size;
    space.set(key, { json, exp, size });
    this.#liveBytes += size;
  }

  #remove(ns: string, key: string): void {
    const space = this.#data.get(ns);
    const old = space?.get(key);
    if (!space || !old) return;
    space.delete(key);
    this.#liveBytes -= old.size;
    if (space.size === 0) this.#data.delete(ns);
  }

  /** Drops expired entries nobody reads, now and then, so memory does not fill with them. */
  #sweepNow(): void {
    if (++this.#writesSinceSweep < 1000) return;
    this.#writesSinceSweep = 0;
    for (const [ns, space] of this.#data) for (const key of [...space.keys()]) this.#live(ns, key);
  }

  #append(line: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#pending.push({ line, resolve, reject });
      this.#kick();
    });
  }

  #kick(): void {
    if (this.#flushing) return;
    this.#flushing = this.#drain().finally(() => {
      this.#flushing = undefined;
      if (this.#pending.length > 0) this.#kick();
    });
  }

  /** Group commit: every write queued while one fsync runs goes out in the next single write + fsync. */
  async #drain(): Promise<void> {
    while (this.#pending.length > 0 && !this.#failed) {
      const batch = this.#pending.splice(0);
      try {
        const buf = Buffer.from(batch.map((w) => w.line).join(''), 'utf8');
        const fh = this.#fh;
        if (!fh) throw new Error('log file not open');
        let written = 0;
        while (written < buf.length) written += (await fh.write(buf, written)).bytesWritten;
        await fh.datasync();
        this.#logBytes += buf.length;
      } catch (err) {
        this.#failed = ioError(`cannot write ${this.#path}; the kv store stops accepting calls`, err);
        for (const w of [...batch, ...this.#pending.splice(0)]) w.reject(this.#failed);
        return;
      }
      for (const w of batch) w.resolve();
      await this.#maybeCompact();
    }
    for (const w of this.#pending.splice(0)) w.reject(this.#failed ?? new KvError('kv.closed', 'closed'));
  }

  async #maybeCompact(): Promise<void> {
    if (
      this.#logBytes < this.#nextCompactCheck ||
      this.#logBytes <= this.#opts.compactRatio * this.#liveBytes
    )
      return;
    try {
      await this.#compact();
    } catch {
      // The old log is intact (the rename is the commit point); try again after more growth.
      this.#nextCompactCheck = this.#logBytes * 2;
    }
  }

  /** Rewrites the log with only live entries: temp file, fsync, rename, fsync the folder. */
  async #compact(): Promise<void> {
    const tmp = `${this.#path}.compact`;
    const now = Date.now();
    const lines: string[] = [];
    for (const [ns, space] of this.#data) {
      for (const [key, e] of space) {
        if (e.exp !== undefined && e.exp <= now) continue;
        lines.push(
          `{"o":"s","n":${JSON.stringify(ns)},"k":${JSON.stringify(key)},"e":${e.exp ?? null},"v":${e.json}}\n`,
        );
      }
    }
    const buf = Buffer.from(lines.join(''), 'utf8');
    const out = await open(tmp, 'w', FILE_MODE);
    try {
      await out.writeFile(buf);
      await out.datasync();
    } finally {
      await out.close();
    }
    await rename(tmp, this.#path);
    await syncDir(this.#opts.dir);
    const old = this.#fh;
    this.#fh = await open(this.#path, 'a', FILE_MODE);
    await old?.close().catch(() => {});
    this.#logBytes = buf.length;
    this.#nextCompactCheck = Math.max(this.#opts.compactMinBytes, 0);
  }
}

type LogRecord =
  | { o: 's'; n: string; k: string; e: number | null; v: unknown }
  | { o: 'd'; n: string; k: string };

function parseRecord(text: string): LogRecord | undefined {
  let r: any;
  try {
    r = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof r !== 'object' || r === null || typeof r.n !== 'string' || typeof r.k !== 'string')
    return undefined;
  if (r.o === 'd') return r;
  if (r.o === 's' && 'v' in r && (r.e === null || typeof r.e === 'number')) return r;
  return undefined;
}

async function syncDir(dir: string): Promise<void> {
  // Makes a created or renamed file's name durable. Not possible on every platform (Windows).
  const fh = await open(dir, 'r').catch(() => undefined);
  if (!fh) return;
  await fh.sync().catch(() => {});
  await fh.close();
}

function ioError(message: string, err: unknown): KvError {
  return new KvError('kv.io', `${message}: ${(err as Error).message}`, undefined, { cause: err });
}
