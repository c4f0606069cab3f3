/**
 * Where approvals are kept: the organism's key/value store (embedded on disk and fsynced, or Redis
 * shared by every daemon), so a waiting approval outlives the process that asked for it.
 *
 *   approvals / r.<id>   the request (written once: setIfAbsent, so a re-run of the same call finds it)
 *   approvals / d.<id>   the decision (written once: setIfAbsent, so the first decision wins, whether a
 *                        person's or the timeout's, on any daemon)
 *   approvals / index    ids of the approvals not yet decided, for listing
 *   approvals / index.lock   held while one daemon rewrites the index
 *
 * The kv store cannot list keys, hence the index. It is rewritten whole (read, change, write), so
 * two daemons on one Redis must not do that at the same instant or one's change is lost: each
 * update holds `index.lock` (setIfAbsent with a short lifetime, so a daemon killed while holding it
 * stops blocking the others after LOCK_SECONDS).
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KvStore } from '../../kv/types.ts';
import type { Approval, ApprovalState } from './types.ts';

const NAMESPACE = 'approvals';
const INDEX = 'index';
const INDEX_LOCK = 'index.lock';
/** How long a held index lock lives at most: far longer than one read and write of the index. */
const LOCK_SECONDS = 5;
/** Kept this long after the approval expires (the once log keeps effects 24 h as well). */
const KEEP_SECONDS = 24 * 3600;
/** The list holds at most this many waiting approvals; older ids drop off it (never the records). */
const MAX_INDEX = 10_000;

export type Requested = Omit<Approval, 'state' | 'decided_by' | 'decided_at' | 'reason'>;

export interface Decision {
  state: Exclude<ApprovalState, 'pending'>;
  by: string;
  at: string;
  reason: string | null;
}

export class ApprovalStore {
  readonly #kv: () => Promise<KvStore>;
  #indexing: Promise<unknown> = Promise.resolve();

  constructor(kv: () => Promise<KvStore>) {
    this.#kv = kv;
  }

  /** Stores a new request; false when one with its id exists already (the same call, asked again). */
  async create(request: Requested): Promise<boolean> {
    const kv = await this.#kv();
    const created = await kv.setIfAbsent(NAMESPACE, `r.${request.id}`, request, ttl(request.expires));
    if (created) await this.#updateIndex((ids) => [...ids.filter((id) => id !== request.id), request.id]);
    return created;
  }

  /** Records the decision unless there is one already; true when this one was stored. */
  async decide(id: string, expires: string, decision: Decision): Promise<boolean> {
    const kv = await this.#kv();
    return kv.setIfAbsent(NAMESPACE, `d.${id}`, decision, ttl(expires));
  }

  /** Takes a decided approval off the list of waiting ones. */
  unlist(id: string): Promise<void> {
    return this.#updateIndex((ids) => ids.filter((other) => other !== id));
  }

  async get(id: string): Promise<Approval | undefined> {
    const kv = await this.#kv();
    const request = (await kv.get(NAMESPACE, `r.${id}`)) as Requested | undefined;
    if (!request) return undefined;
    const decision = (await kv.get(NAMESPACE, `d.${id}`)) as Decision | undefined;
    return withDecision(request, decision);
  }

  /** Ids of the approvals still waiting, oldest first. */
  async pendingIds(): Promise<string[]> {
    const kv = await this.#kv();
    const ids = await kv.get(NAMESPACE, INDEX);
    return Array.isArray(ids) ? ids.filter((id): id is string => typeof id === 'string') : [];
  }

  /** One index update at a time (read, change, write): in call order here, under the lock across daemons. */
  #updateIndex(change: (ids: string[]) => string[]): Promise<void> {
    const next = this.#indexing.then(async () => {
      const kv = await this.#kv();
      const token = await lockIndex(kv);
      try {
        const ids = change(await this.pendingIds());
        await kv.set(NAMESPACE, INDEX, ids.slice(-MAX_INDEX));
      } finally {
        // Only our own lock: after LOCK_SECONDS it may have passed to another daemon.
        if ((await kv.get(NAMESPACE, INDEX_LOCK)) === token) await kv.delete(NAMESPACE, INDEX_LOCK);
      }
    });
    this.#indexing = next.catch(() => {}); // a failed update must not block the next
    return next;
  }
}

export function withDecision(request: Requested, decision: Decision | undefined): Approval {
  return {
    ...request,
    state: decision?.state ?? 'pending',
    decided_by: decision?.by ?? null,
    decided_at: decision?.at ?? null,
    reason: decision?.reason ?? null,
  };
}

/** Waits for the index lock (backing off from 1 ms to 50 ms) and returns the token that holds it. */
async function lockIndex(kv: KvStore): Promise<string> {
  const token = randomUUID();
  for (
    let wait = 1;
    !(await kv.setIfAbsent(NAMESPACE, INDEX_LOCK, token, LOCK_SECONDS));
    wait = Math.min(wait * 2, 50)
  ) {
    await sleep(wait);
  }
  return token;
}

function ttl(expires: string): number {
  const left = Math.ceil((Date.parse(expires) - Date.now()) / 1000);
  return Math.max(1, left) + KEEP_SECONDS;
}
