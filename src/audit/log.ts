/**
 * The append-only audit log writer. `append` only queues (the bus never waits on the disk); a single
 * writer drains the queue in order, in batches (records that follow a write within `gatherMs` wait
 * that long to share the next one; flush() does not wait). If the disk refuses a write, the records stay queued,
 * the failure is reported loudly on stderr, and the write is retried: nothing is dropped quietly.
 * The chain is computed at write time from the file's actual last line, so another process that
 * appended in between (say `organism tools call` next to the daemon) does not break it.
 * With `keys`, every line is sealed with the keyring's current key (chain.ts). When the last line
 * is sealed with an older key of the ring (the key was rotated), an `audit.key_rotated` record
 * sealed with that older key comes first, naming the new one; when it names a key this process
 * does not know (another process rotated), the key file is read again.
 */
import { type FileHandle, mkdir, open, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { AuditError } from '../errors.ts';
import { BackgroundWriter } from '../storage/background-writer.ts';
import { type ChainHead, chainHead, lineKeyId, sealLine } from './chain.ts';
import type { AuditKey, AuditKeyring } from './key.ts';
import type { AuditEntry, ChangeRecord } from './record.ts';

export interface AuditLogOptions {
  /** Absolute path of the JSON-lines file. */
  path: string;
  /** Where loud failures go; stderr by default. */
  onError?: (message: string) => void;
  /** Wait before the first retry of a failed write (ms); doubles on each failure, up to 30 s. */
  retryMs?: number;
  /** The audit keys (key.ts); without them lines are unkeyed, which verify does not accept as proof. */
  keys?: AuditKeyring;
  /**
   * Records that come within this many ms of the last write share the next write (ms; 0 writes
   * each at once). A record after a quiet spell is written at once; flush() and close() never wait.
   */
  gatherMs?: number;
}

export function defaultAuditLogOptions(): Required<Omit<AuditLogOptions, 'path' | 'keys'>> {
  return {
    onError: (message) => process.stderr.write(`[organism audit] ${message}\n`),
    retryMs: 1000,
    // Tool calls that each wait on I/O (an MCP server's, a model's) come one per event-loop turn, so
    // without gathering each is its own stat + append with its callbacks on the daemon's thread:
    // ~90 µs of CPU per call measured (bench mcp), more than the MCP round trip it audits.
    gatherMs: 5,
  };
}

/** Where callers send entries; the dispatcher depends on this, tests may pass their own. */
export interface AuditSink {
  append(entry: AuditEntry): void;
  flush(): Promise<void>;
  close(): Promise<void>;
}

/** Reads the last complete line of a file, or undefined when it is empty. */
async function lastLine(handle: FileHandle, size: number): Promise<string | undefined> {
  if (size === 0) return undefined;
  let window = 64 * 1024;
  for (;;) {
    const start = Math.max(0, size - window);
    const buffer = Buffer.alloc(size - start);
    await handle.read(buffer, 0, buffer.length, start);
    let text = buffer.toString('utf8');
    if (text.endsWith('\n')) text = text.slice(0, -1);
    const cut = text.lastIndexOf('\n');
    if (cut >= 0) return text.slice(cut + 1);
    if (start === 0) return text === '' ? undefined : text;
    window *= 4;
  }
}

async function endsWithNewline(handle: FileHandle, size: number): Promise<boolean> {
  const byte = Buffer.alloc(1);
  await handle.read(byte, 0, 1, size - 1);
  return byte[0] === 0x0a;
}

export class AuditLog implements AuditSink {
  readonly path: string;
  readonly #options: Required<Omit<AuditLogOptions, 'path' | 'keys'>>;
  readonly #keys: AuditKeyring | undefined;
  readonly #writer: BackgroundWriter<AuditEntry>;
  #handle: FileHandle | undefined;
  #ino = -1;
  /** Size of the file after our last write, to notice appends by others. */
  #size = -1;
  /** The file's last line and its hash, as this process wrote it or last read it back. */
  #head: ChainHead | undefined;
  #warnedUnkeyed = false;

  constructor(options: AuditLogOptions) {
    this.path = options.path;
    this.#keys = options.keys;
    const { keys: _keys, ...rest } = options;
    this.#options = { ...defaultAuditLogOptions(), ...stripUndefined(rest) } as Required<
      Omit<AuditLogOptions, 'path' | 'keys'>
    >;
    const { onError, retryMs, gatherMs } = this.#options;
    this.#writer = new BackgroundWriter<AuditEntry>({
      gatherMs,
      write: (batch) => this.#write(batch),
      afterFailure: () => this.#dropHandle(),
      retryDelayMs: (failures) => Math.min(30_000, retryMs * 2 ** Math.min(failures - 1, 15)),
      onError,
      failedMessage: (error, pending, wait) =>
        `CANNOT WRITE AUDIT LOG ${this.path}: ${error.message}. ${pending} record(s) kept in memory; retrying in ${wait} ms`,
      recoveredMessage: () => `audit log ${this.path} is writable again; queued records written`,
      flushError: (pending) =>
        new AuditError(
          'audit.write',
          `cannot write the audit log ${this.path}; ${pending} record(s) still queued`,
          {
            path: this.path,
            pending,
          },
        ),
      // A record that arrives late is still written: the audit log must not lose one.
      writeAfterClose: true,
    });
  }

  /** Records waiting to be written. */
  get pending(): number {
    return this.#writer.pending;
  }

  append(entry: AuditEntry): void {
    if (this.#writer.closed) {
      this.#options.onError(
        `record for ${'tool' in entry ? entry.tool : entry.type} arrived after the audit log was closed; writing it anyway`,
      );
    }
    this.#writer.push(entry);
  }

  /** Resolves when every record queued so far is on disk; rejects with AuditError if the disk refuses. */
  flush(): Promise<void> {
    return this.#writer.flush();
  }

  async close(): Promise<void> {
    try {
      await this.#writer.close();
    } finally {
      await this.#dropHandle();
    }
  }

  async #dropHandle(): Promise<void> {
    const handle = this.#handle;
    this.#handle = undefined;
    await handle?.close().catch(() => {});
  }

  async #write(batch: AuditEntry[]): Promise<void> {
    let info = await stat(this.path).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
    if (!this.#handle || !info || info.ino !== this.#ino) {
      await this.#handle?.close().catch(() => {});
      await mkdir(dirname(this.path), { recursive: true });
      this.#handle = await open(this.path, 'a+', 0o600);
      info = await this.#handle.stat();
      this.#ino = info.ino;
      this.#size = -1;
    }
    const handle = this.#handle;
    // The path's inode is the open handle's, so the path's stat is the handle's size too: one file
    // system round trip less per batch (a batch per call when calls wait on I/O, as MCP calls do).
    const size = info.size;
    // Someone else appended (or this is our first write): chain onto what is actually there. When
    // the size is ours, the last line is the one this process wrote, kept with its hash.
    let text = '';
    if (size !== this.#size) {
      this.#head = chainHead(await lastLine(handle, size));
      // A line cut short by a crash must not swallow ours: start on a fresh line (verify names it).
      if (size > 0 && !(await endsWithNewline(handle, size))) text = '\n';
    }
    let head = this.#head;
    const last = head === undefined ? undefined : lineKeyId(head.line);
    const key = await this.#sealingKey(head?.line, last);
    const rotation = this.#rotation(last, key);
    if (rotation) {
      head = sealLine(rotation.entry, head, rotation.key);
      text += `${head.line}\n`;
    }
    for (const entry of batch) {
      head = sealLine(entry, head, key);
      text += `${head.line}\n`;
    }
    // One buffer, written as is: its length is what the file grew by (no second pass to count).
    const bytes = Buffer.from(text, 'utf8');
    for (let done = 0; done < bytes.length; ) {
      done += (await handle.write(bytes, done, bytes.length - done)).bytesWritten;
    }
    this.#head = head;
    this.#size = size + bytes.length;
  }

  /**
   * The key for new lines; reads the key file again when the last line names a key (`last`, from
   * lineKeyId) not in the ring.
   */
  async #sealingKey(prevLine: string | undefined, last: string | undefined): Promise<AuditKey | undefined> {
    const ring = this.#keys;
    if (!ring) return undefined;
    if (
      last === undefined &&
      prevLine !== undefined &&
      !this.#warnedUnkeyed &&
      /"hash":"[0-9a-f]{64}"\}$/.test(prevLine)
    ) {
      this.#warnedUnkeyed = true;
      this.#options.onError(
        `${this.path} holds records from before audit keys (no key_id); verify reports them as not proven. Move that log aside once so the new one is proven from its first record`,
      );
    }
    if (last !== undefined && !ring.keys.some((k) => k.id === last)) {
      await ring.refresh();
      if (!ring.keys.some((k) => k.id === last)) {
        this.#options.onError(
          `the last record of ${this.path} is sealed with audit key ${last}, which ${ring.source} does not hold; verify will stop there until that key is configured`,
        );
      }
    }
    return ring.current;
  }

  /** When the last line is sealed with an older key of the ring: the record of the switch, sealed with it. */
  #rotation(
    last: string | undefined,
    key: AuditKey | undefined,
  ): { entry: ChangeRecord; key: AuditKey } | undefined {
    const ring = this.#keys;
    if (!ring || !key || last === undefined || last === key.id) return undefined;
    const from = ring.keys.find((k) => k.id === last);
    if (!from) return undefined;
    const entry: ChangeRecord = {
      type: 'change',
      time: new Date().toISOString(),
      action: 'audit.key_rotated',
      by: 'organism',
      listener: null,
      thread: null,
      detail: `audit key ${from.id} -> ${key.id}: records from here on are sealed with ${key.id}`,
    };
    return { entry, key: from };
  }
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
