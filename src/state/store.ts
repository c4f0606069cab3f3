/**
 * The runtime state store: what the runtime decides by (approvals, once-only effect records) kept
 * apart from every store and key space a tool can use, its records sealed (seal.ts).
 *
 * Apart: a KvStore of its own, never the tools' one (open.ts): embedded, `<data_dir>/state`, a folder
 * the key_value_* tools never open and the file tools and the sandbox do not show (all of data_dir is
 * hidden from them); Redis, the organism's own key space `organism:{<group>}:state:`, which no
 * namespace or key of the key_value_* tools (`organism:kv:<namespace>:<key>`) can name.
 *
 * Sealed: a record that fails its seal is never acted on. It reads as `forged`, and the first time
 * this process meets that record it is reported (`threat`: the daemon audits it as a threat and logs
 * it at error), so a waiter that looks again every second does not fill the audit log.
 *
 * The backing store opens on first use: a tool call that needs neither approval nor a once-only
 * record never touches it.
 */
import type { ThreatRecord } from '../audit/record.ts';
import type { KvStore } from '../kv/types.ts';
import type { StateSeal } from './seal.ts';

/** A record that failed its seal: where it is, why it failed, and the call it concerns when known. */
export interface StateThreat {
  /** `<space>/<key>`, e.g. `approvals/d.ap_...`. */
  record: string;
  reason: string;
  /** The tool of the call the record belongs to; '' when nothing trustworthy names it. */
  tool: string;
}

/** The audit log's record of a state threat. */
export function stateThreatRecord({ record, reason, tool }: StateThreat): ThreatRecord {
  return {
    type: 'threat',
    time: new Date().toISOString(),
    kind: 'state',
    tool,
    reason,
    module: null,
    record,
  };
}

export type StateRead = { found: false } | { found: true; value: unknown } | { found: true; forged: string };

export interface RuntimeStateOptions {
  /** Opens the backing store (called once, on first use; again after a failed open). */
  open: () => Promise<KvStore>;
  seal: StateSeal;
  /** Told of each record that fails its seal, once per record and process. */
  threat?: (threat: StateThreat) => void;
}

/** Records reported already (by place and seal), so a record looked at again is reported once. */
const MAX_REPORTED = 10_000;

export class RuntimeState {
  readonly seal: StateSeal;
  readonly #open: () => Promise<KvStore>;
  readonly #threat: ((threat: StateThreat) => void) | undefined;
  readonly #reported = new Set<string>();
  #store: Promise<KvStore> | undefined;
  #closed = false;

  constructor(options: RuntimeStateOptions) {
    this.seal = options.seal;
    this.#open = options.open;
    this.#threat = options.threat;
  }

  /** The backing store, for bookkeeping that is not decided by (the approvals' index and its lock). */
  store(): Promise<KvStore> {
    if (this.#closed) return Promise.reject(new Error('the runtime state store is closed'));
    if (!this.#store) {
      const opening = this.#open();
      this.#store = opening;
      // A failed open is forgotten, so the next use tries again (say, Redis came back).
      opening.catch(() => {
        if (this.#store === opening) this.#store = undefined;
      });
    }
    return this.#store;
  }

  /** The record at space/key, opened; a forged one is reported (once) and never returned as a value. */
  async get(space: string, key: string, tool = ''): Promise<StateRead> {
    const raw = await (await this.store()).get(space, key);
    if (raw === undefined) return { found: false };
    const where = `${space}/${key}`;
    const opened = this.seal.open(where, raw);
    if (opened.ok) return { found: true, value: opened.value };
    this.#report(where, raw, opened.reason, tool);
    return { found: true, forged: opened.reason };
  }

  async set(space: string, key: string, value: unknown, ttlSeconds?: number): Promise<void> {
    await (await this.store()).set(space, key, this.seal.seal(`${space}/${key}`, value), ttlSeconds);
  }

  /** A record whose value is a secret: sealed and encrypted (seal.ts), read back with get. */
  async setSecret(space: string, key: string, value: unknown): Promise<void> {
    await (await this.store()).set(space, key, this.seal.sealSecret(`${space}/${key}`, value));
  }

  async delete(space: string, key: string): Promise<void> {
    await (await this.store()).delete(space, key);
  }

  async setIfAbsent(space: string, key: string, value: unknown, ttlSeconds?: number): Promise<boolean> {
    const sealed = this.seal.seal(`${space}/${key}`, value);
    return (await this.store()).setIfAbsent(space, key, sealed, ttlSeconds);
  }

  async close(): Promise<void> {
    this.#closed = true;
    const store = this.#store;
    this.#store = undefined;
    await (await store?.catch(() => undefined))?.close();
  }

  #report(where: string, raw: unknown, reason: string, tool: string): void {
    const mac = (raw as { mac?: unknown } | null)?.mac;
    const id = `${where}\u0000${typeof mac === 'string' ? mac : JSON.stringify(raw).slice(0, 200)}`;
    if (this.#reported.has(id)) return;
    if (this.#reported.size >= MAX_REPORTED) this.#reported.clear();
    this.#reported.add(id);
    try {
      this.#threat?.({ record: where, reason: `${where} failed verification: ${reason}`, tool });
    } catch {
      // Reporting never costs the caller its answer: the record is refused either way.
    }
  }
}
