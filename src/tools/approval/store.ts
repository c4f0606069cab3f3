/**
 * Where approvals are kept: the runtime state store (src/state), out of every tool's reach and
 * sealed, embedded on disk and fsynced or Redis shared by every daemon, so a waiting approval
 * outlives the process that asked for it.
 *
 *   approvals / r.<id>   the request (written once: setIfAbsent, so a re-run of the same call finds it)
 *   approvals / d.<id>   the decision (written once: setIfAbsent, so the first decision wins, whether a
 *                        person's or the timeout's, on any daemon)
 *   approvals / index    ids of the approvals not yet decided, for listing
 *   approvals / index.lock   held while one daemon rewrites the index
 *
 * Requests and decisions are sealed (bound to their place, so a decision is bound to its approval's
 * id) and never acted on unless their seal holds: a forged decision reads as a denial by the
 * organism, a forged request as an approval that cannot be granted (see lookup()). The index and its
 * lock are not sealed: the index only says which ids to look at, and every id listed is read through
 * its sealed request, so a forged entry shows nothing that is not a genuine approval.
 *
 * The store cannot list keys, hence the index. It is rewritten whole (read, change, write), so
 * two daemons on one Redis must not do that at the same instant or one's change is lost: each
 * update holds `index.lock` (setIfAbsent with a short lifetime, so a daemon killed while holding it
 * stops blocking the others after LOCK_SECONDS).
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KvStore } from '../../kv/types.ts';
import type { RuntimeState } from '../../state/store.ts';
import type { Approval, ApprovalState } from './types.ts';

/** The runtime state space of approvals. */
export const APPROVALS_SPACE = 'approvals';
const NAMESPACE = APPROVALS_SPACE;
const INDEX = 'index';
const INDEX_LOCK = 'index.lock';
/** How long a held index lock lives at most: far longer than one read and write of the index. */
const LOCK_SECONDS = 5;
/** Kept this long after the approval expires (the once log keeps effects 24 h as well). */
const KEEP_SECONDS = 24 * 3600;
/** The list holds at most this many waiting approvals; older ids drop off it (never the records). */
const MAX_INDEX = 10_000;
/** What approvalId() makes; anything else in the index is not looked at. */
const APPROVAL_ID = /^ap_[0-9a-f]{24}$/;

export type Requested = Omit<Approval, 'state' | 'decided_by' | 'decided_at' | 'reason'>;

export interface Decision {
  state: Exclude<ApprovalState, 'pending'>;
  by: string;
  at: string;
  reason: string | null;
}

/** What lookup() found: nothing, a genuine approval, or a record that failed its seal. */
export type Lookup =
  | { found: false }
  | { found: true; approval: Approval }
  | { found: true; forged: 'request' | 'decision'; reason: string; approval?: Approval };

export class ApprovalStore {
  readonly #state: RuntimeState;
  #indexing: Promise<unknown> = Promise.resolve();

  constructor(state: RuntimeState) {
    this.#state = state;
  }

  /** Stores a new request; false when one with its id exists already (the same call, asked again). */
  async create(request: Requested): Promise<boolean> {
    const created = await this.#state.setIfAbsent(
      NAMESPACE,
      `r.${request.id}`,
      request,
      ttl(request.expires),
    );
    if (created) await this.#updateIndex((ids) => [...ids.filter((id) => id !== request.id), request.id]);
    return created;
  }

  /** Records the decision unless there is one already; true when this one was stored. */
  decide(id: string, expires: string, decision: Decision): Promise<boolean> {
    return this.#state.setIfAbsent(NAMESPACE, `d.${id}`, decision, ttl(expires));
  }

  /** Takes a decided approval off the list of waiting ones. */
  unlist(id: string): Promise<void> {
    return this.#updateIndex((ids) => ids.filter((other) => other !== id));
  }

  /**
   * The approval with this id as its sealed records say. `tool`: the asking call's, named in the
   * threat report when the request itself is forged (nothing in a forged record is trusted).
   */
  async lookup(id: string, tool?: string): Promise<Lookup> {
    const request = await this.#state.get(NAMESPACE, `r.${id}`, tool ?? '');
    if (!request.found) return { found: false };
    if ('forged' in request) return { found: true, forged: 'request', reason: request.forged };
    const genuine = request.value as Requested;
    const decision = await this.#state.get(NAMESPACE, `d.${id}`, tool ?? genuine.tool);
    if (decision.found && 'forged' in decision) {
      const approval = refused(genuine, `its decision record failed verification (${decision.forged})`);
      return { found: true, forged: 'decision', reason: decision.forged, approval };
    }
    return {
      found: true,
      approval: withDecision(genuine, decision.found ? (decision.value as Decision) : undefined),
    };
  }

  /**
   * The approval with this id, or undefined. A forged decision reads as a denial by the organism (the
   * call must not run, and nobody can decide it any more); a forged request as no approval at all.
   */
  async get(id: string): Promise<Approval | undefined> {
    const found = await this.lookup(id);
    return found.found ? found.approval : undefined;
  }

  /** Ids of the approvals still waiting, oldest first. */
  async pendingIds(): Promise<string[]> {
    const kv = await this.#state.store();
    const ids = await kv.get(NAMESPACE, INDEX);
    return Array.isArray(ids)
      ? ids.filter((id): id is string => typeof id === 'string' && APPROVAL_ID.test(id))
      : [];
  }

  /** One index update at a time (read, change, write): in call order here, under the lock across daemons. */
  #updateIndex(change: (ids: string[]) => string[]): Promise<void> {
    const next = this.#indexing.then(async () => {
      const kv = await this.#state.store();
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

/** `request` refused by the organism: how a call whose approval records failed verification ends. */
export function refused(request: Requested, reason: string): Approval {
  return {
    ...request,
    state: 'denied',
    decided_by: 'organism',
    decided_at: new Date().toISOString(),
    reason,
  };
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

/**
 * Waits for the index lock (backing off from 1 ms to 50 ms) and returns the token that holds it. A
 * lock held by one holder past its lifetime was not set by a daemon (whose lock expires after
 * LOCK_SECONDS) but by someone with access to the store: it is taken away, so it cannot hold every
 * approval of the organism up for good.
 */
async function lockIndex(kv: KvStore): Promise<string> {
  const token = randomUUID();
  let holder: string | undefined;
  let since = Date.now();
  for (let wait = 1; !(await kv.setIfAbsent(NAMESPACE, INDEX_LOCK, token, LOCK_SECONDS)); ) {
    const now = JSON.stringify(await kv.get(NAMESPACE, INDEX_LOCK));
    if (now !== holder) {
      holder = now;
      since = Date.now();
    } else if (Date.now() - since > (LOCK_SECONDS + 1) * 1000) {
      await kv.delete(NAMESPACE, INDEX_LOCK);
      continue;
    }
    await sleep(wait);
    wait = Math.min(wait * 2, 50);
  }
  return token;
}

function ttl(expires: string): number {
  const left = Math.ceil((Date.parse(expires) - Date.now()) / 1000);
  return Math.max(1, left) + KEEP_SECONDS;
}
