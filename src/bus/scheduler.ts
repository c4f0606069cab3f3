/**
 * One listener's inbox: bounded (a full queue refuses, it never grows), at most `maxConcurrent`
 * handlers running, and fair across threads: pending work is kept per thread and taken round-robin,
 * so one chatty thread cannot starve the others.
 */

export interface QueueOptions {
  capacity: number;
  maxConcurrent: number;
}

/**
 * A thread's pending items once it has two or more; a thread with one item pending (most of them,
 * when 100,000 threads each wait with a message) keeps the item itself, with no lane and no array.
 */
class ThreadLane<T> {
  head = 0;
  constructor(readonly items: T[]) {}
}

/**
 * Handler runs that may start in one turn of the event loop, across every queue of the process.
 * In memory a hop is all promise callbacks: a busy organism would otherwise never let the loop
 * turn, and the HTTP API, timers and the trace exporter would wait until every thread is idle.
 * Past this many runs the queues wait for the next turn (a setImmediate), so I/O runs in between.
 */
const RUNS_PER_TURN = 256;
let runsThisTurn = 0;
let turnScheduled = false;
const waitingForTurn: Array<() => void> = [];

function newTurn(): void {
  turnScheduled = false;
  runsThisTurn = 0;
  const waiting = waitingForTurn.splice(0);
  for (const resume of waiting) resume();
}

/** One more run in this turn, or false with `resume` called at the next turn. */
function takeRun(resume: () => void): boolean {
  if (!turnScheduled) {
    turnScheduled = true;
    setImmediate(newTurn);
  }
  if (runsThisTurn < RUNS_PER_TURN) {
    runsThisTurn++;
    return true;
  }
  waitingForTurn.push(resume);
  return false;
}

export class ListenerQueue<T> {
  /** Pending work per thread: the one item, or a ThreadLane of several. */
  readonly #lanes = new Map<string, T | ThreadLane<T>>();
  /** Threads with pending items, in the order they will be served. */
  readonly #ring: string[] = [];
  #ringHead = 0;
  /**
   * The item that came while nothing else waited and no slot was free: held here, not in the lanes
   * and the ring, and served before them (everything there came after it). In memory a thread
   * loops through its listener with every slot taken by the runs its own hops nested (see
   * #start), so each hop waits here for one run to end: a Map set, get and delete a hop less.
   */
  #first: T | undefined;
  /** The thread of #first; undefined when no item is held there. */
  #firstThread: string | undefined;
  #pending = 0;
  #running = 0;
  #paused = false;
  /** Waiting for the event loop's next turn (see RUNS_PER_TURN). */
  #waitingTurn = false;
  #idleWaiters: Array<() => void> = [];

  constructor(
    // Not readonly: a hot reload may change capacity and concurrency of a live queue (configure()).
    private options: QueueOptions,
    /** Runs an item: undefined when it is over on return, else a promise that settles when it is. */
    private readonly run: (item: T) => Promise<void> | undefined,
  ) {}

  /** Queues an item; false when the queue is full (the caller reports busy). */
  offer(thread: string, item: T): boolean {
    if (this.#pending >= this.options.capacity) return false;
    // Nothing waiting and a slot free (a hop in memory, most of the time): the item runs now, and
    // never enters the lanes and the ring. Nobody is passed over, since nobody waits.
    if (this.#pending === 0) {
      if (this.#canRun()) {
        if (this.#start(item)) this.#pump();
      } else {
        this.#first = item;
        this.#firstThread = thread;
        this.#pending = 1;
      }
      return true;
    }
    // A second item of #first's thread: the two wait in its lane, the thread first in the ring.
    if (thread === this.#firstThread) this.#laneFirst();
    const lane = this.#lanes.get(thread);
    if (lane === undefined) {
      this.#lanes.set(thread, item);
      this.#ring.push(thread);
    } else if (lane instanceof ThreadLane) lane.items.push(item);
    else this.#lanes.set(thread, new ThreadLane([lane, item]));
    this.#pending++;
    this.#pump();
    return true;
  }

  /** True when an offer now would be refused. */
  get full(): boolean {
    return this.#pending >= this.options.capacity;
  }

  get depth(): number {
    return this.#pending;
  }

  get active(): number {
    return this.#running;
  }

  get isPaused(): boolean {
    return this.#paused;
  }

  pause(): void {
    this.#paused = true;
  }

  /**
   * New capacity and concurrency for a live queue (hot reload). Queued items stay; a smaller
   * capacity only refuses new offers until the queue drains below it.
   */
  configure(options: QueueOptions): void {
    this.options = { ...options };
    this.#pump();
  }

  /** Takes every queued (not yet running) item of one thread out of the queue (thread killed). */
  removeThread(thread: string): T[] {
    const removed: T[] = [];
    if (this.#firstThread === thread) removed.push(this.#takeFirst());
    const lane = this.#lanes.get(thread);
    if (lane instanceof ThreadLane) removed.push(...lane.items.slice(lane.head));
    else if (lane !== undefined) removed.push(lane);
    if (removed.length === 0) return removed;
    this.#lanes.delete(thread);
    // The ring may still name the thread; next() skips names whose lane is gone.
    this.#pending -= removed.length;
    this.#settleIdle();
    return removed;
  }

  resume(): void {
    this.#paused = false;
    this.#pump();
  }

  /** Resolves when nothing is queued or running. */
  idle(): Promise<void> {
    if (this.#pending === 0 && this.#running === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Drops everything still queued (shutdown after the drain deadline); returns the dropped items. */
  clear(): T[] {
    const dropped: T[] = [];
    if (this.#firstThread !== undefined) dropped.push(this.#takeFirst());
    for (const lane of this.#lanes.values()) {
      if (lane instanceof ThreadLane) dropped.push(...lane.items.slice(lane.head));
      else dropped.push(lane);
    }
    this.#lanes.clear();
    this.#ring.length = 0;
    this.#ringHead = 0;
    this.#pending = 0;
    this.#settleIdle();
    return dropped;
  }

  readonly #resume = (): void => {
    this.#waitingTurn = false;
    this.#pump();
  };

  #pump(): void {
    while (this.#pending > 0 && this.#canRun()) {
      // A run that is over on return has freed its slot already: the loop serves the next item.
      this.#start(this.#next());
    }
  }

  /** A slot is free and this turn of the event loop may start one more run (see RUNS_PER_TURN). */
  #canRun(): boolean {
    if (this.#waitingTurn || this.#paused || this.#running >= this.options.maxConcurrent) return false;
    if (takeRun(this.#resume)) return true;
    this.#waitingTurn = true;
    return false;
  }

  /** Runs an item in a slot; true when the run is over on return (its slot is free again). */
  #start(item: T): boolean {
    this.#running++;
    // `run` reports its own failures; a rejection (or a throw) here must still free the slot.
    let running: Promise<void> | undefined;
    try {
      running = this.run(item);
    } catch {
      running = undefined;
    }
    if (running !== undefined) {
      running.then(this.#done, this.#done);
      return false;
    }
    // Over already (a hop in memory): no promise and no microtask turn before the next run. The
    // run held its slot while it ran, so a run it started in turn (its own output) nests at most
    // maxConcurrent deep.
    this.#running--;
    this.#settleIdle();
    return true;
  }

  /** A run has finished: its slot serves the next item. One function for every run, not one each. */
  readonly #done = (): void => {
    this.#running--;
    this.#pump();
    this.#settleIdle();
  };

  #next(): T {
    if (this.#firstThread !== undefined) {
      this.#pending--;
      return this.#takeFirst();
    }
    // Compact the ring once its consumed head grows, so it never holds stale entries for long.
    if (this.#ringHead > 64 && this.#ringHead * 2 > this.#ring.length) {
      this.#ring.splice(0, this.#ringHead);
      this.#ringHead = 0;
    }
    let thread = this.#ring[this.#ringHead++]!;
    let lane = this.#lanes.get(thread);
    // A killed thread's lane is gone but its name may still be in the ring: skip it.
    while (lane === undefined) {
      thread = this.#ring[this.#ringHead++]!;
      lane = this.#lanes.get(thread);
    }
    this.#pending--;
    if (!(lane instanceof ThreadLane)) {
      this.#lanes.delete(thread);
      return lane;
    }
    const item = lane.items[lane.head]!;
    lane.items[lane.head++] = undefined as T;
    if (lane.head === lane.items.length) {
      this.#lanes.delete(thread);
    } else {
      // More work for this thread: it goes to the back of the line.
      if (lane.head > 64 && lane.head * 2 > lane.items.length) {
        lane.items.splice(0, lane.head);
        lane.head = 0;
      }
      this.#ring.push(thread);
    }
    return item;
  }

  /** #first into the lanes, its thread at the head of the ring (it came before all there). */
  #laneFirst(): void {
    const thread = this.#firstThread!;
    this.#lanes.set(thread, this.#takeFirst());
    if (this.#ringHead > 0) this.#ring[--this.#ringHead] = thread;
    else this.#ring.unshift(thread);
  }

  #takeFirst(): T {
    const item = this.#first as T;
    this.#first = undefined;
    this.#firstThread = undefined;
    return item;
  }

  #settleIdle(): void {
    if (this.#pending === 0 && this.#running === 0 && this.#idleWaiters.length > 0) {
      const waiters = this.#idleWaiters;
      this.#idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }
}
