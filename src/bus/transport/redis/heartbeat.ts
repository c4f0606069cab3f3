/**
 * The heartbeat: every heartbeatMs a daemon marks the entries it holds (being delivered, or handled
 * and being acknowledged) as alive, so their idle time in the consumer group stays below
 * claimIdleMs and no other daemon's reaper takes them, however long their handlers run. A daemon
 * that stops marking (killed, frozen) has its entries claimed a few missed heartbeats later.
 *
 * An entry is marked only while this consumer still owns it (the batch script's `beat`). Marking
 * by a plain XCLAIM would take back an entry another daemon claimed while this one was frozen (a
 * long GC pause, a stalled event loop, Redis out of reach for longer than claimIdleMs), and the
 * two would then take it from each other at every heartbeat. The entries another consumer owns
 * now are reported: the handler here still finishes, and what it does twice is harmless (its
 * outputs carry the ids the other daemon's run derives too, side-effecting tools act once per
 * call id, and its ack only ends an entry whose work is done).
 *
 * The marks ride in the transport's command batch (one operation per stream), so a heartbeat
 * costs no command of its own on the connection the daemon's hops go through.
 */
import type { Redis } from 'ioredis';
import type { BusBatch } from './batch.ts';
import type { ResolvedRedisBusOptions } from './options.ts';
import type { StreamReader } from './reader.ts';

export interface HeartbeatStats {
  /** Entries this daemon held that another daemon had taken over when it next marked them. */
  lost: number;
}

export class Heartbeat {
  #beating = false;
  #last = 0;
  /** Ids already reported as taken over (logged once each; bounded). */
  readonly #reported = new Set<string>();

  constructor(
    private readonly client: Redis,
    private readonly batch: BusBatch,
    private readonly options: ResolvedRedisBusOptions,
    private readonly stats: HeartbeatStats,
  ) {}

  /** Marks every entry the readers hold. Skipped while the last heartbeat is still out. */
  async beat(readers: Iterable<StreamReader>): Promise<void> {
    const now = Date.now();
    const late = this.#last > 0 ? now - this.#last - this.options.heartbeatMs : 0;
    this.#last = now;
    if (late > this.options.claimIdleMs - this.options.heartbeatMs) {
      // The event loop was blocked (or the process stopped) past the point where others may claim.
      this.options.logger.warn(
        { late_ms: late, claim_idle_ms: this.options.claimIdleMs },
        'heartbeat late: this daemon was frozen long enough for others to take over its entries',
      );
    }
    if (this.#beating || this.client.status !== 'ready') return;
    const marks: Array<Promise<void>> = [];
    for (const reader of readers) {
      const ids = reader.inFlightIds();
      if (ids.length > 0)
        marks.push(this.batch.beat(reader.stream, ids).then((taken) => this.#lost(reader, taken)));
    }
    if (marks.length === 0) return;
    this.#beating = true;
    try {
      await Promise.all(marks);
    } catch {
      // Redis unreachable or slow: the next beat tries again; the reader reports connection trouble.
    } finally {
      this.#beating = false;
    }
  }

  #lost(reader: StreamReader, taken: string[]): void {
    for (let i = 0; i + 1 < taken.length; i += 2) {
      const id = taken[i]!;
      if (this.#reported.has(id) || !reader.has(id)) continue;
      if (this.#reported.size >= 10_000) this.#reported.clear();
      this.#reported.add(id);
      this.stats.lost++;
      this.options.logger.warn(
        { listener: reader.listener, entry: id, owner: taken[i + 1] },
        'stream entry taken over by another daemon while this one missed its heartbeats; ' +
          'its handler here still finishes (outputs and tool calls keep their ids, so effects happen once)',
      );
    }
  }
}
