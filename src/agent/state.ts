/**
 * Per-thread loop state of one agent. A loop that only calls tools lives and ends inside one
 * handler call; a loop that consults a peer is suspended here between the message it sent and the
 * reply (which arrives at onReply). Bounded: at most `max` loops are kept, the oldest go first, and
 * a loop waiting longer than `ttlMs` is dropped; both are logged, since the caller then gets no
 * answer from this agent.
 */
import { type RecencyTable, recencyTable } from '../recency.ts';
import type { RecordedCall } from './record.ts';
import type { ChatMessage, ToolCallResult } from './types.ts';

export interface PendingPeer {
  callId: string;
  peer: string;
}

export interface LoopState {
  thread: string;
  /** Who gave the task (ctx.from), for the logs. */
  caller: string;
  /** Id of the message that gave the task, as the thread history has it ('' when unknown). */
  task: string;
  messages: ChatMessage[];
  turns: number;
  phase: 'running' | 'waiting';
  /** The calls of the turn being answered, in order, each with its key (see record.ts). */
  calls: RecordedCall[];
  /** Answers so far to `calls`. */
  results: Map<string, ToolCallResult>;
  /** Peer consultations still waiting for a reply, oldest first. */
  pending: PendingPeer[];
  /** The last model text, for a final message when the loop stops early. */
  lastText: string;
  /** `provider/model` that answered last. */
  backend: string;
  updated: number;
}

/** The state of a task about to get its first turn. */
export function newLoopState(thread: string, caller: string, task: string, content: string): LoopState {
  return {
    thread,
    caller,
    task,
    messages: [{ role: 'user', content }],
    turns: 0,
    phase: 'running',
    calls: [],
    results: new Map(),
    pending: [],
    lastText: '',
    backend: '',
    updated: 0,
  };
}

export class LoopStore {
  /**
   * Recency is `set` (every turn), so recency order is `updated` order; reads peek. Not a Map
   * re-inserted per turn: see ../recency.ts for what that cost with many loops kept.
   */
  readonly #loops: RecencyTable<string, LoopState>;

  constructor(
    max: number,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    private readonly onDrop: (state: LoopState, why: 'ttl' | 'capacity') => void = () => {},
  ) {
    this.#loops = recencyTable(max, (state) => this.onDrop(state, 'capacity'));
  }

  get size(): number {
    return this.#loops.size;
  }

  get(thread: string): LoopState | undefined {
    return this.#loops.peek(thread);
  }

  has(thread: string): boolean {
    return this.#loops.has(thread);
  }

  set(state: LoopState): void {
    state.updated = this.now();
    this.#loops.set(state.thread, state);
  }

  delete(thread: string): void {
    this.#loops.delete(thread);
  }

  /** Drops loops that waited too long. Cheap: stops at the first fresh one (oldest come first). */
  sweep(): void {
    const limit = this.now() - this.ttlMs;
    // Collected first: lru-cache's iteration may not survive a delete of the entry it is on.
    const stale: LoopState[] = [];
    for (const state of this.#loops.rvalues()) {
      if (state === undefined) continue; // only a pending fetch would be; this table has none
      if (state.updated > limit) break;
      if (state.phase === 'waiting') stale.push(state);
    }
    for (const state of stale) {
      this.#loops.delete(state.thread);
      this.onDrop(state, 'ttl');
    }
  }
}
