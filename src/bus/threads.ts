/**
 * The thread registry: which call chains exist and who answers whom.
 *
 * A thread is one conversation started by an injection. Inside it, every send opens a *frame*: the
 * target handles the message in that frame, and respond() travels to the frame's caller in the
 * parent frame, then prunes the frame and everything below it. Frames are records linked by parent
 * id, so a 10,000-hop forward chain costs 10,000 small records (not a growing chain string), and
 * many threads sharing the same path never collide: each has its own frame ids.
 */
import { randomUUID } from 'node:crypto';
import type { Capability } from '../tools/types.ts';
import type { ThreadStatus } from './api.ts';
import { nextId } from './ids.ts';
import type { Message } from './message.ts';

export interface Frame {
  id: string;
  thread: string;
  /** The listener that handles messages in this frame. */
  listener: string;
  /** Who respond() in this frame goes back to: a listener, or an ingress name such as `api`. */
  caller: string;
  /** The caller's own frame; null when the caller is outside the organism (ingress). */
  parent: string | null;
  depth: number;
  /**
   * Whether a shared thread store holds a record of the frame, for other daemons to find (set by
   * the store; always false without one). A frame that links to no parent has none at first:
   * the message that opens it carries it (Message.frameDepth).
   */
  stored: boolean;
}

export interface ThreadState {
  id: string;
  created: number;
  lastActive: number;
  hops: number;
  /** Messages published but not yet fully handled. */
  inFlight: number;
  stopped: boolean;
  /** Capabilities tools may use in this thread; undefined means unrestricted. */
  scope: readonly Capability[] | undefined;
  /**
   * Frame ids of this thread, for pruning and collection: none, one id, or a Set from two on. Most
   * live threads hold one frame (a message waiting); a Set each cost ~150 bytes at 100,000 threads.
   * Read and changed through frameIds / addFrameId / deleteFrameId.
   */
  frames: string | Set<string> | undefined;
}

/** The frame ids a thread holds (see ThreadState.frames). */
export function frameIds(state: ThreadState): Iterable<string> {
  const frames = state.frames;
  return frames === undefined ? [] : typeof frames === 'string' ? [frames] : frames;
}

function addFrameId(state: ThreadState, id: string): void {
  const frames = state.frames;
  if (frames === undefined) state.frames = id;
  else if (typeof frames === 'string') {
    if (frames !== id) state.frames = new Set([frames, id]);
  } else frames.add(id);
}

function deleteFrameId(state: ThreadState, id: string): void {
  const frames = state.frames;
  if (frames === id) state.frames = undefined;
  else if (typeof frames === 'object') {
    frames.delete(id);
    // Back to the inline form once one is left, so a thread that fanned out once stays small.
    if (frames.size <= 1) state.frames = frames.size === 0 ? undefined : frames.values().next().value;
  }
}

export interface ThreadRegistryOptions {
  maxHops: number;
  maxDepth: number;
  idleMs: number;
  /** Told of every change (a shared store keeping other daemons in step); absent costs nothing. */
  observer?: ThreadRegistryObserver;
}

/**
 * Sees each change to the registry as it happens, so a shared thread store (src/bus/transport/redis) can
 * write it through for the other daemons of the organism. Synchronous; must not throw.
 */
export interface ThreadRegistryObserver {
  threadCreated(state: ThreadState): void;
  frameOpened(frame: Frame): void;
  framesPruned(thread: string, frames: readonly Frame[]): void;
  hopCharged(state: ThreadState): void;
}

export type BudgetCheck = { ok: true } | { ok: false; what: 'hops' | 'depth'; limit: number };

/** The answer of every hop within budget: one object, not one per hop. */
const WITHIN_BUDGET: BudgetCheck = Object.freeze({ ok: true });

export class ThreadRegistry {
  readonly #threads = new Map<string, ThreadState>();
  readonly #frames = new Map<string, Frame>();
  /** Child frame ids by parent frame id, so pruning a subtree never scans the whole thread. */
  readonly #children = new Map<string, Set<string>>();

  readonly #observer: ThreadRegistryObserver | undefined;

  constructor(private readonly options: ThreadRegistryOptions) {
    this.#observer = options.observer;
  }

  createThread(scope?: readonly Capability[]): ThreadState {
    const now = Date.now();
    const state: ThreadState = {
      id: randomUUID(),
      created: now,
      lastActive: now,
      hops: 0,
      inFlight: 0,
      stopped: false,
      scope: scope ? Object.freeze([...new Set(scope)]) : undefined,
      frames: undefined,
    };
    this.#threads.set(state.id, state);
    this.#observer?.threadCreated(state);
    return state;
  }

  /** Takes in a thread another daemon created (loaded from a shared store); keeps a known one. */
  adopt(state: ThreadState): ThreadState {
    const known = this.#threads.get(state.id);
    if (known) return known;
    this.#threads.set(state.id, state);
    return state;
  }

  /** Takes in a frame another daemon opened (loaded from a shared store). */
  adoptFrame(frame: Frame): void {
    if (this.#frames.has(frame.id)) return;
    this.#frames.set(frame.id, frame);
    const state = this.#threads.get(frame.thread);
    if (state) addFrameId(state, frame.id);
    if (frame.parent) {
      let kids = this.#children.get(frame.parent);
      if (!kids) {
        kids = new Set();
        this.#children.set(frame.parent, kids);
      }
      kids.add(frame.id);
    }
  }

  thread(id: string): ThreadState | undefined {
    return this.#threads.get(id);
  }

  frame(id: string): Frame | undefined {
    return this.#frames.get(id);
  }

  status(state: ThreadState): ThreadStatus {
    if (state.stopped) return 'stopped';
    return state.inFlight > 0 ? 'active' : 'idle';
  }

  /**
   * Opens a frame in which `listener` handles a message from `caller`. `parent` is the caller's
   * frame, or null when nothing can be delivered back to the caller (an ingress, or a listener
   * with no onReply): then the frame links to nothing, and a forward chain keeps no frames alive.
   */
  openFrame(thread: ThreadState, listener: string, caller: string, parent: Frame | null, depth = 0): Frame {
    const frame: Frame = {
      id: nextId(),
      thread: thread.id,
      listener,
      caller,
      parent: parent?.id ?? null,
      depth,
      stored: false,
    };
    this.#frames.set(frame.id, frame);
    addFrameId(thread, frame.id);
    if (parent) {
      let kids = this.#children.get(parent.id);
      if (!kids) {
        kids = new Set();
        this.#children.set(parent.id, kids);
      }
      kids.add(frame.id);
    }
    this.#observer?.frameOpened(frame);
    return frame;
  }

  /**
   * Drops this daemon's copy of a frame that links to no parent and has no children, without
   * telling the observer: the frame is not pruned, its record stays in the shared store, and the
   * daemon that delivers into it loads it from there (see Publisher).
   */
  forgetFrame(frame: Frame): void {
    if (frame.parent || this.#children.has(frame.id)) return;
    this.#frames.delete(frame.id);
    const state = this.#threads.get(frame.thread);
    if (state) deleteFrameId(state, frame.id);
  }

  /** Removes a frame and every frame opened below it: a responder's sub-calls end with it. */
  pruneFrame(frame: Frame): void {
    const thread = this.#threads.get(frame.thread);
    if (frame.parent) this.#children.get(frame.parent)?.delete(frame.id);
    // A frame with no children and nobody to tell (every hop in memory): no walk, no list.
    if (!this.#observer && !this.#children.has(frame.id)) {
      this.#frames.delete(frame.id);
      if (thread) deleteFrameId(thread, frame.id);
      return;
    }
    const stack = [frame.id];
    const pruned: Frame[] | undefined = this.#observer ? [frame] : undefined;
    while (stack.length > 0) {
      const id = stack.pop()!;
      const kids = this.#children.get(id);
      if (kids) for (const kid of kids) stack.push(kid);
      this.#children.delete(id);
      const known = this.#frames.get(id);
      if (known && pruned && known !== frame) pruned.push(known);
      this.#frames.delete(id);
      if (thread) deleteFrameId(thread, id);
    }
    if (pruned) this.#observer!.framesPruned(frame.thread, pruned);
  }

  /** Counts one hop against the thread's budgets; the frame's depth is checked too. */
  chargeHop(thread: ThreadState, depth: number): BudgetCheck {
    thread.lastActive = Date.now();
    if (thread.hops >= this.options.maxHops) return { ok: false, what: 'hops', limit: this.options.maxHops };
    if (depth > this.options.maxDepth) return { ok: false, what: 'depth', limit: this.options.maxDepth };
    thread.hops++;
    this.#observer?.hopCharged(thread);
    return WITHIN_BUDGET;
  }

  /** Forgets threads with nothing in flight that have been quiet longer than idleMs. Returns their ids. */
  collectIdle(now = Date.now()): string[] {
    const collected: string[] = [];
    for (const [id, state] of this.#threads) {
      if (state.inFlight === 0 && now - state.lastActive >= this.options.idleMs) {
        for (const frameId of frameIds(state)) {
          this.#frames.delete(frameId);
          this.#children.delete(frameId);
        }
        this.#threads.delete(id);
        collected.push(id);
      }
    }
    return collected;
  }

  get size(): { threads: number; frames: number } {
    return { threads: this.#threads.size, frames: this.#frames.size };
  }
}

/** The frame a message carries (see Message.frameDepth), as the registry holds frames; none: undefined. */
export function frameCarriedBy(message: Message): Frame | undefined {
  if (message.frameDepth === undefined) return undefined;
  return {
    id: message.frame,
    thread: message.thread,
    listener: message.to,
    caller: message.from,
    parent: null,
    depth: message.frameDepth,
    stored: false,
  };
}
