/**
 * The approval gate: a call that needs a person's approval waits here (dispatcher step 9) until
 * someone approves or denies it, or its time runs out. One gate per daemon, kept across reloads.
 *
 * The approval's id is derived from the call id (which is the same when a handler runs again after
 * a restart, see ../once.ts), so a call asked about before a crash finds its approval again: still
 * waiting, or decided meanwhile. Decisions are written once (first wins) in the runtime state store
 * (src/state: out of every tool's reach, sealed; a forged record is refused and reported, store.ts);
 * a call waiting in this process hears of one made here at once, of one made by another daemon
 * (Redis) within `pollMs`.
 */
import { createHash } from 'node:crypto';
import type { AuditSink } from '../../audit/log.ts';
import { redactString } from '../../audit/redact.ts';
import { ApprovalError } from '../../errors.ts';
import type { RuntimeState } from '../../state/store.ts';
import { canonicalJson } from '../canonical.ts';
import { elicitApproval, mayElicit } from './elicit.ts';
import { ApprovalStore, type Decision, type Requested, refused } from './store.ts';
import { type Approval, type ApprovalAsk, MAX_REASON_CHARS } from './types.ts';
import { reviewView } from './view.ts';

export { MAX_REASON_CHARS };

export interface ApprovalGateOptions {
  /** The organism's runtime state store (src/state: apart from the tools' stores, sealed; opened on first use). */
  state: RuntimeState;
  /** Where decisions are recorded (who, why). */
  audit?: AuditSink;
  /** How often a waiting call looks for a decision made by another daemon (ms). Default 1000. */
  pollMs?: number;
}

/** Told of each new approval and each decision (the thread history, the live stream). */
export interface ApprovalObserver {
  requested?(approval: Approval): void;
  decided?(approval: Approval): void;
}

/** What approvalId() makes. */
const APPROVAL_ID = /^ap_[0-9a-f]{24}$/;

/**
 * Stable per call: the same call id (and thread, listener, tool) with the same arguments gives the
 * same approval. The arguments are part of it because a person approves what they were shown: a
 * re-run of the call id with other arguments (a handler that is not deterministic) asks again.
 */
export function approvalId(
  ask: Pick<ApprovalAsk, 'callId' | 'thread' | 'listener' | 'tool' | 'args'>,
): string {
  const digest = createHash('sha256')
    .update([ask.thread, ask.listener, ask.tool, ask.callId, canonicalJson(ask.args)].join('\u0000'))
    .digest('hex');
  return `ap_${digest.slice(0, 24)}`;
}

export class ApprovalGate {
  readonly #store: ApprovalStore;
  readonly #audit: AuditSink | undefined;
  readonly #pollMs: number;
  readonly #observers = new Set<ApprovalObserver>();
  /** Calls waiting in this process, by approval id. */
  readonly #waiters = new Map<string, Set<(approval: Approval) => void>>();
  /** Approvals this process is deciding right now: their waiters hear of it from #settle, audited first. */
  readonly #settling = new Set<string>();
  /** Calls asking or waiting in this process, by listener and tool (bounded by settings.maxPending). */
  readonly #asking = new Map<string, number>();

  constructor(options: ApprovalGateOptions) {
    this.#store = new ApprovalStore(options.state);
    this.#audit = options.audit;
    this.#pollMs = options.pollMs ?? 1000;
  }

  observe(observer: ApprovalObserver): () => void {
    this.#observers.add(observer);
    return () => this.#observers.delete(observer);
  }

  /**
   * Waits for the decision on this call (asking for it if it is new) and returns it. Throws
   * ApprovalError('approval.too_many') for a new call when `settings.maxPending` calls of the same
   * listener and tool ask or wait here already: one agent turn cannot bury the approvers (and
   * push other listeners' approvals off the list) under a flood of requests; and
   * ApprovalError('approval.not_reviewable') when the arguments cannot be shown to a person as they
   * would run (view.ts): then nobody is asked.
   */
  async ask(ask: ApprovalAsk): Promise<Approval> {
    // Nobody is asked about arguments that cannot be shown as they run (view.ts).
    const view = reviewView(ask.args);
    if ('notReviewable' in view) throw new ApprovalError('approval.not_reviewable', view.notReviewable);
    const id = approvalId(ask);
    const key = `${ask.listener}\u0000${ask.tool}`;
    // Counted before the first await, so calls made at once (one agent turn) are counted too.
    if ((this.#asking.get(key) ?? 0) >= ask.settings.maxPending && !(await this.#store.get(id))) {
      throw new ApprovalError(
        'approval.too_many',
        `${ask.settings.maxPending} calls of ${ask.tool} by ${ask.listener} wait for approval already (approval_max_pending); no approval was asked for this one`,
      );
    }
    this.#asking.set(key, (this.#asking.get(key) ?? 0) + 1);
    try {
      return await this.#ask(id, ask, view);
    } finally {
      const left = (this.#asking.get(key) ?? 1) - 1;
      if (left > 0) this.#asking.set(key, left);
      else this.#asking.delete(key);
    }
  }

  async #ask(id: string, ask: ApprovalAsk, view: { shown: unknown; digest: string }): Promise<Approval> {
    const now = Date.now();
    const request: Requested = {
      id,
      thread: ask.thread,
      listener: ask.listener,
      tool: ask.tool,
      call_id: ask.callId,
      args: view.shown,
      args_sha256: view.digest,
      verdict: ask.verdict,
      rule_id: ask.ruleId,
      why: ask.why,
      role: ask.settings.role,
      requested: new Date(now).toISOString(),
      expires: new Date(now + ask.settings.timeoutMs).toISOString(),
    };
    // The user of the MCP client this call runs for is asked too, for as long as the call waits here.
    const elicitation = new AbortController();
    try {
      if (await this.#store.create(request)) {
        const asked: Approval = { ...request, ...UNDECIDED };
        this.#tell('requested', asked);
        if (ask.client && ask.settings.elicit && mayElicit(ask.client, asked)) {
          void elicitApproval(
            ask.client,
            asked,
            (state, by, reason, allowed) => this.decide(id, state, by, reason, allowed),
            elicitation.signal,
          );
        }
      }
      // A request stored before (by this call's run before a restart) keeps its own expiry.
      const found = await this.#store.lookup(id, ask.tool);
      if (found.found && 'forged' in found) {
        // Never acted on (the state store reported it as a threat): the call is refused, on the record.
        const why = `its ${found.forged} record failed verification (${found.reason})`;
        const denial = found.approval ?? refused(request, why);
        this.#tell('decided', denial);
        return denial;
      }
      const current = found.found ? found.approval : { ...request, ...UNDECIDED };
      if (current.state !== 'pending') return current;
      return await this.#wait(current);
    } finally {
      // Decided (here, elsewhere, or by its timeout): the client's question is withdrawn.
      elicitation.abort();
    }
  }

  /** Approvals still waiting, oldest first; those whose time ran out are decided as timed out first. */
  async list(): Promise<Approval[]> {
    const out: Approval[] = [];
    for (const id of await this.#store.pendingIds()) {
      const approval = await this.#store.get(id);
      if (approval?.state !== 'pending') {
        await this.#store.unlist(id); // expired from the store, or decided by a daemon that stopped
        continue;
      }
      if (Date.parse(approval.expires) <= Date.now()) {
        await this.#timeOut(approval);
        continue;
      }
      out.push(approval);
    }
    return out;
  }

  /** The approval with this id; undefined for an id no approval can have (the API passes any text). */
  get(id: string): Promise<Approval | undefined> {
    return APPROVAL_ID.test(id) ? this.#store.get(id) : Promise.resolve(undefined);
  }

  /**
   * A person's decision. `allowed` says whether the decider holds the approval's role (the caller
   * knows the roles). Throws ApprovalError: not_found, decided (someone was first), forbidden.
   */
  async decide(
    id: string,
    state: 'approved' | 'denied',
    by: string,
    reason: string | null,
    allowed: (role: Approval['role']) => boolean,
  ): Promise<Approval> {
    const approval = await this.get(id);
    if (!approval) throw new ApprovalError('approval.not_found', `no approval with id '${id.slice(0, 64)}'`);
    if (!allowed(approval.role))
      throw new ApprovalError(
        'approval.forbidden',
        `deciding approval ${id} needs the ${approval.role} role; token '${by}' does not have it`,
      );
    if (approval.state === 'pending' && Date.parse(approval.expires) <= Date.now()) {
      await this.#timeOut(approval);
      throw new ApprovalError('approval.decided', `approval ${id} timed out before this decision`);
    }
    const clean = reason === null ? null : redactString(reason.slice(0, MAX_REASON_CHARS));
    const decided = await this.#settle(approval, { state, by, at: new Date().toISOString(), reason: clean });
    if (!decided) {
      const now = await this.#store.get(id);
      throw new ApprovalError(
        'approval.decided',
        `approval ${id} was already decided: ${now?.state ?? 'unknown'} by ${now?.decided_by ?? 'unknown'}`,
      );
    }
    return decided;
  }

  /** Denies, as the organism, every approval still waiting in `thread` (killed, out of budget). */
  async denyThread(thread: string, reason: string): Promise<number> {
    let denied = 0;
    for (const approval of await this.list()) {
      if (approval.thread !== thread) continue;
      const at = new Date().toISOString();
      if (await this.#settle(approval, { state: 'denied', by: 'organism', at, reason })) denied++;
    }
    return denied;
  }

  /** Stops every wait in this process without deciding (shutdown): the approvals stay pending. */
  close(): void {
    this.#waiters.clear();
  }

  async #wait(approval: Approval): Promise<Approval> {
    const { id } = approval;
    return new Promise<Approval>((resolve) => {
      let poll: NodeJS.Timeout | undefined;
      let expiry: NodeJS.Timeout | undefined;
      const waiters = this.#waiters.get(id) ?? new Set();
      this.#waiters.set(id, waiters);
      const finish = (decided: Approval) => {
        clearInterval(poll);
        clearTimeout(expiry);
        waiters.delete(finish);
        if (waiters.size === 0 && this.#waiters.get(id) === waiters) this.#waiters.delete(id);
        resolve(decided);
      };
      waiters.add(finish);
      const look = async () => {
        if (this.#settling.has(id)) return;
        const found = await this.#store.lookup(id, approval.tool).catch(() => undefined);
        const now = found?.found ? found.approval : undefined;
        if (!now || now.state === 'pending' || this.#settling.has(id)) return;
        // A forged decision is refused here, not decided by anyone: it goes on the record here too.
        if (found && 'forged' in found) this.#tell('decided', now);
        finish(now);
      };
      // Another daemon may decide: look now and then. The store may be briefly away: look again later.
      poll = setInterval(() => void look(), this.#pollMs);
      poll.unref?.();
      const left = Math.max(0, Date.parse(approval.expires) - Date.now());
      expiry = setTimeout(() => {
        void this.#timeOut(approval).then(
          (decided) => (decided ? finish(decided) : look()),
          () => look(),
        );
      }, left);
      // Neither timer keeps a stopping process alive: the approval stays in the store for the next.
      expiry.unref?.();
    });
  }

  /** Decides a waiting approval as timed out (a denial); null when someone decided first. */
  #timeOut(approval: Approval): Promise<Approval | null> {
    const ms = Date.parse(approval.expires) - Date.parse(approval.requested);
    return this.#settle(approval, {
      state: 'timed_out',
      by: 'organism',
      at: new Date().toISOString(),
      reason: `no decision within ${ms} ms`,
    });
  }

  /** Stores the decision if it is the first; then audits it and tells the waiters and observers. */
  async #settle(approval: Approval, decision: Decision): Promise<Approval | null> {
    this.#settling.add(approval.id);
    let stored: boolean;
    try {
      stored = await this.#store.decide(approval.id, approval.expires, decision);
    } finally {
      this.#settling.delete(approval.id);
    }
    if (!stored) {
      await this.#store.unlist(approval.id); // decided elsewhere: not waiting any more either way
      return null;
    }
    const decided: Approval = {
      ...approval,
      state: decision.state,
      decided_by: decision.by,
      decided_at: decision.at,
      reason: decision.reason,
    };
    this.#audit?.append({
      type: 'approval',
      time: decision.at,
      decision: decision.state,
      approval: approval.id,
      call_id: approval.call_id,
      thread: approval.thread,
      listener: approval.listener,
      tool: approval.tool,
      args: approval.args,
      args_sha256: approval.args_sha256,
      by: decision.by,
      reason: decision.reason,
    });
    for (const waiter of [...(this.#waiters.get(approval.id) ?? [])]) waiter(decided);
    this.#tell('decided', decided);
    await this.#store.unlist(approval.id);
    return decided;
  }

  #tell(event: 'requested' | 'decided', approval: Approval): void {
    for (const observer of this.#observers) {
      try {
        observer[event]?.(approval);
      } catch {
        // Observers (history, stream) never cost a decision.
      }
    }
  }
}

const UNDECIDED = { state: 'pending', decided_by: null, decided_at: null, reason: null } as const;
