/**
 * Checkpoints of an audit log, kept outside it (AWS CloudTrail's digest files are the model): each
 * names the log (organism, log id), how many records it held and the hash of its last line (what
 * the next record's `prev` names), and its size in bytes. They are sealed and chained like the
 * log's own lines (chain.ts: `prev` is the SHA-256 of the previous checkpoint line, `hash` the
 * HMAC under the audit key), so nobody without the key can write one or drop one from the middle.
 *
 * Why outside the log: a chain shows a line changed or removed in the middle, but not lines cut
 * from the end, a deleted log, or a whole other log (another organism's, sealed with the same key
 * file, or an older copy of this one) put in its place. A checkpoint says what the log held at a
 * time, so `organism audit --verify` and the next writer can tell. By default they live beside the
 * audit key (`$XDG_CONFIG_HOME/organism/checkpoints/`), out of data_dir: whoever can delete the
 * log can then not delete its checkpoints with it.
 *
 * `changed` carries, from checkpoint to checkpoint, a change of the log that a writer found and no
 * operator has acknowledged yet (`organism audit --acknowledge` writes one with `changed: null`):
 * so the refusal survives a restart, and verify reports it.
 */
import { randomBytes } from 'node:crypto';
import { type FileHandle, mkdir, open, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { AuditError } from '../errors.ts';
import { type ChainHead, chainHead, checkLine, sealLine, sha256 } from './chain.ts';
import { type AuditKeyring, defaultAuditKeyFile, keyFileProblem } from './key.ts';
import type { AuditEntry } from './record.ts';
import { lastLine, lastLines } from './tail.ts';

export type CheckpointKind = 'start' | 'checkpoint' | 'close' | 'changed' | 'acknowledged';

/** One checkpoint as written (before `prev`, `key_id` and `hash`). */
export interface Checkpoint {
  type: 'checkpoint';
  seq: number;
  time: string;
  /** start: a new log; checkpoint: on the way; close: a writer closed; changed: a writer found the log changed under it; acknowledged: an operator accepted the log as it is. */
  kind: CheckpointKind;
  organism: string;
  /** The log's absolute path, as configured. */
  log: string;
  /** The id its first record names ('' when an operator acknowledged a log that is gone). */
  log_id: string;
  records: number;
  bytes: number;
  /** SHA-256 of the log's last line, null for an empty log. */
  head: string | null;
  /** A change found and not acknowledged yet, in words; null when none is open. */
  changed: string | null;
  /** Who acknowledged (kind acknowledged), else null. */
  by: string | null;
  detail: string | null;
}

/** A checkpoint read back, with the line it was read from. */
export interface StoredCheckpoint {
  checkpoint: Checkpoint;
  line: string;
}

/** A fresh log id: 128 random bits in hex. */
export function newLogId(): string {
  return randomBytes(16).toString('hex');
}

/**
 * The checkpoint file of the log at `logPath`: in `dir` (default: `checkpoints/` beside the audit
 * key file, `$XDG_CONFIG_HOME/organism/checkpoints`), named by the organism and a hash of the
 * log's absolute path, so organisms sharing the key folder keep apart.
 */
export function checkpointFile(options: {
  logPath: string;
  organism: string;
  dir?: string | undefined;
  keyFile?: string | undefined;
  env?: NodeJS.ProcessEnv;
}): string {
  const dir =
    options.dir ?? join(dirname(options.keyFile ?? defaultAuditKeyFile(options.env)), 'checkpoints');
  const slug = options.organism.replace(/[^A-Za-z0-9_.-]+/g, '_').slice(0, 64) || 'organism';
  return join(dir, `${slug}-${sha256(resolve(options.logPath)).slice(0, 16)}.jsonl`);
}

/** Why `dir` may not hold checkpoints (inside data_dir or the workspace), or undefined. */
export function checkpointDirProblem(dir: string, dataDir: string, workspace?: string): string | undefined {
  const problem = keyFileProblem(join(dir, 'x'), dataDir, workspace);
  return problem === undefined
    ? undefined
    : `audit checkpoint folder ${dir} is inside data_dir or the workspace; whoever can cut the audit log could cut its checkpoints there too. Put it outside (the default is beside the audit key)`;
}

/** Parses a sealed checkpoint line (its seal is checked by the caller with checkLine). */
export function parseCheckpoint(line: string): Checkpoint | undefined {
  try {
    const value = JSON.parse(line) as Checkpoint;
    return value?.type === 'checkpoint' && typeof value.seq === 'number' ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Reads and appends one checkpoint file. Appends chain onto the file's actual last line (another
 * process, `organism tools call`, checkpoints the same log), read again only when the file's size
 * is not the one this store left.
 */
export class CheckpointStore {
  readonly file: string;
  readonly #keys: AuditKeyring;
  #size = -1;
  #last: ChainHead | undefined;

  constructor(file: string, keys: AuditKeyring) {
    this.file = file;
    this.#keys = keys;
  }

  /**
   * The last checkpoint, undefined when there is none; throws AuditError (audit.broken) when the
   * last line is not a checkpoint sealed with one of the keys (a forged or damaged file).
   */
  async latest(): Promise<StoredCheckpoint | undefined> {
    let handle: FileHandle;
    try {
      handle = await open(this.file, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new AuditError(
        'audit.read',
        `cannot read the audit checkpoints ${this.file}: ${(error as Error).message}`,
        { path: this.file },
      );
    }
    try {
      const { size } = await handle.stat();
      const [before, line] = await lastLines(handle, size, 2).then((l) =>
        l.length < 2 ? [undefined, l[0]] : l,
      );
      if (line === undefined) return undefined;
      // The line before is read only to check the last one's link; the whole chain is verify's.
      const check = checkLine(line, before, new Map(this.#keys.keys.map((k) => [k.id, k])));
      const checkpoint = parseCheckpoint(line);
      if (!check.ok || check.keyId === null || checkpoint === undefined) {
        throw new AuditError(
          'audit.broken',
          `the last audit checkpoint in ${this.file} ${check.ok ? 'is not a sealed checkpoint' : check.reason}`,
          { path: this.file },
        );
      }
      return { checkpoint, line };
    } finally {
      await handle.close();
    }
  }

  /** Appends `fields` as the next checkpoint (seq and time filled in) and returns it. */
  async append(fields: Omit<Checkpoint, 'type' | 'seq' | 'time'>): Promise<Checkpoint> {
    await mkdir(dirname(this.file), { recursive: true, mode: 0o700 });
    const handle = await open(this.file, 'a+', 0o600);
    try {
      const { size } = await handle.stat();
      if (size !== this.#size) {
        this.#last = chainHead(await lastLine(handle, size));
      }
      const previous = this.#last === undefined ? undefined : parseCheckpoint(this.#last.line);
      const checkpoint: Checkpoint = {
        type: 'checkpoint',
        seq: (previous?.seq ?? 0) + 1,
        time: new Date().toISOString(),
        ...fields,
        // A change another writer found stays open until an operator acknowledges it.
        changed:
          fields.kind === 'acknowledged' ? fields.changed : (fields.changed ?? previous?.changed ?? null),
      };
      const head = sealLine(checkpoint as unknown as AuditEntry, this.#last, this.#keys.current);
      const bytes = Buffer.from(`${head.line}\n`, 'utf8');
      await handle.write(bytes, 0, bytes.length, null);
      this.#last = head;
      this.#size = size + bytes.length;
      return checkpoint;
    } finally {
      await handle.close();
    }
  }

  /** The file's size now (-1 when missing): the writer polls it while it refuses calls. */
  async size(): Promise<number> {
    return (await stat(this.file).catch(() => undefined))?.size ?? -1;
  }
}
