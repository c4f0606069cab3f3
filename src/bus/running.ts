/**
 * The handler runs in progress, so kill and shutdown can abort them (bus.running). Not a Set of
 * contexts: adding a new object to a Set first gives it an identity hash (a call into the runtime)
 * and every delete leaves a hole until the next rehash, ~4 % of a hop in memory (profiled). Here a
 * run keeps its place in one array, and leaving swaps the last run into it.
 */
import type { DeliveryContext } from './context.ts';

/** A run as this list keeps it: its context, and its place while it is listed (-1 when not). */
export interface ListedRun {
  readonly ctx: DeliveryContext;
  slot: number;
}

export class RunningHandlers implements Iterable<DeliveryContext> {
  readonly #runs: ListedRun[] = [];

  get size(): number {
    return this.#runs.length;
  }

  add(run: ListedRun): void {
    run.slot = this.#runs.length;
    this.#runs.push(run);
  }

  delete(run: ListedRun): void {
    const slot = run.slot;
    if (slot < 0 || this.#runs[slot] !== run) return;
    const last = this.#runs.pop()!;
    if (last !== run) {
      this.#runs[slot] = last;
      last.slot = slot;
    }
    run.slot = -1;
  }

  /** The contexts listed now (a copy: aborting one may end its run, and so unlist it, at once). */
  *[Symbol.iterator](): Iterator<DeliveryContext> {
    for (const run of this.#runs.slice()) yield run.ctx;
  }
}
