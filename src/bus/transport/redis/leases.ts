/**
 * Partition leases: with several partitions (partitions.ts) each partition of a listener's stream
 * is read by one daemon at a time, the holder of its lease (a key per listener and partition, in
 * the partition's slot: the holder's name, with a TTL). A daemon then runs a reader, and a
 * blocking XREADGROUP, only for the partitions it holds, and its batches carry more of each.
 *
 * Who should hold what: every daemon reading a listener marks itself alive in a sorted set at each
 * heartbeat (Redis's clock), and of D live names, sorted, the i-th takes the i-th of D equal runs
 * of consecutive partitions. Consecutive partitions share a master (partitions.ts gives them
 * consecutive slot ranges), so a daemon's turn goes to as few masters, in as few script calls
 * (partitioned-batch.ts), as the split allows. Every daemon computes the same split from the same
 * set; the leases make it safe while their views differ for a heartbeat or two (a partition is
 * then read by nobody for that long, never by two).
 *
 * A handover keeps each thread's order. The old holder stops reading the partition and runs what
 * it has read to the end, renewing the lease all the while; only when nothing of the partition is
 * in flight here does it release the lease. So a handler that runs long delays the handover rather
 * than having its message run twice, and the new holder never reads a thread's next message while
 * the last one still runs. A new holder first claims what the last one left pending (a dead
 * daemon's entries: its lease lives claimIdleMs + heartbeatMs, so they are idle past claimIdleMs by
 * then) and only then reads new entries.
 *
 * A daemon that dies stops renewing: its name drops out of the set after claimIdleMs, its leases
 * expire a heartbeat later, and the others take its partitions at their next heartbeat, within
 * claimIdleMs + 2 x heartbeatMs. A daemon frozen past its lease finds it taken at its next renewal
 * and stops reading there at once (what it was running still finishes, as heartbeat.ts says).
 */
import type { Redis } from 'ioredis';
import { within } from '../../lifecycle.ts';
import { scrubUrl } from './connection.ts';
import type { BusKeys, ResolvedRedisBusOptions } from './options.ts';
import type { StreamReader } from './reader.ts';
import { LEASE_SCRIPT, MEMBERS_SCRIPT } from './scripts.ts';

type LeaseClient = Redis & {
  organismLease(
    key: string,
    holder: string,
    ttlMs: string,
    op: 'take' | 'renew' | 'release',
  ): Promise<number>;
  organismMembers(key: string, name: string, ttlMs: string, op: 'join' | 'leave'): Promise<string[]>;
};

export interface LeaseHost {
  readonly client: Redis;
  readonly keys: BusKeys;
  readonly options: ResolvedRedisBusOptions;
}

/** How long a lease lives without renewal: past the claim time, by a heartbeat. */
export function leaseTtlMs(options: ResolvedRedisBusOptions): number {
  return options.claimIdleMs + options.heartbeatMs;
}

export class ListenerLeases {
  readonly #client: LeaseClient;
  /** Partitions held and read here. */
  readonly #held = new Map<number, StreamReader>();
  /** Partitions being handed over: no longer read, their entries still running, the lease renewed. */
  readonly #leaving = new Map<number, StreamReader>();
  #ticking: Promise<void> | undefined;
  /** Partitions whose renewal is on its way (one at a time each). */
  readonly #renewing = new Set<number>();
  #closed = false;

  /**
   * `start(p)` makes the reader of partition p once its lease is taken; it claims what the last
   * holder left before it reads.
   */
  constructor(
    private readonly host: LeaseHost,
    readonly listener: string,
    private readonly start: (partition: number) => StreamReader,
  ) {
    this.#client = host.client as LeaseClient;
    if (!(host.client as unknown as Partial<LeaseClient>).organismLease) {
      host.client.defineCommand('organismLease', { numberOfKeys: 1, lua: LEASE_SCRIPT });
      host.client.defineCommand('organismMembers', { numberOfKeys: 1, lua: MEMBERS_SCRIPT });
    }
  }

  /** The readers of this listener here, the leaving ones too (their entries are heartbeated). */
  readers(): StreamReader[] {
    return [...this.#held.values(), ...this.#leaving.values()];
  }

  /** The partitions read here now, in order. */
  held(): number[] {
    return [...this.#held.keys()].sort((a, b) => a - b);
  }

  /**
   * Called every heartbeat: renews each lease held here, then runs one round (mark this daemon
   * alive, give up and take leases) unless the last one still runs. The renewals go on their own,
   * each lease by itself: a master that stalls (a failover, a slow script) holds up only the leases
   * it serves, where a round that renewed after the members call let every lease expire behind one
   * slow master (test/bus/redis-cluster-failover.test.ts).
   */
  tick(): Promise<void> {
    this.#renew();
    this.#ticking ??= this.#round().finally(() => {
      this.#ticking = undefined;
    });
    return this.#ticking;
  }

  /** Renews what is held or still being handed over; a lease found taken was lost (frozen here). */
  #renew(): void {
    if (this.#closed) return;
    const ttl = String(leaseTtlMs(this.host.options));
    const failed: number[] = [];
    let why = '';
    const renewals: Array<Promise<void>> = [];
    for (const [p, reader] of [...this.#held, ...this.#leaving]) {
      if (this.#renewing.has(p)) continue;
      this.#renewing.add(p);
      renewals.push(
        this.#lease(p, ttl, 'renew')
          .then(
            (ok) => {
              if (ok === 0 && !this.#closed) this.#lost(p, reader);
            },
            (error: unknown) => {
              failed.push(p);
              why = (error as Error).message;
            },
          )
          .finally(() => this.#renewing.delete(p)),
      );
    }
    if (renewals.length === 0) return;
    void Promise.all(renewals).then(() => {
      // Redis away or slow: the next heartbeat tries again; the lease lives until its TTL.
      if (failed.length > 0 && !this.#closed) {
        this.host.options.logger.warn(
          { listener: this.listener, partitions: failed.sort((a, b) => a - b) },
          `partition lease renewal failed: ${scrubUrl(why, this.host.options.url)}`,
        );
      }
    });
  }

  async #round(): Promise<void> {
    if (this.#closed) return;
    const { keys, options } = this.host;
    const me = options.consumer;
    const ttl = String(leaseTtlMs(options));
    try {
      const live = (
        await this.#client.organismMembers(
          keys.members(this.listener),
          me,
          String(options.claimIdleMs),
          'join',
        )
      ).sort();
      const at = live.indexOf(me);
      const mine = new Set<number>();
      for (let p = 0; p < keys.partitions && at >= 0; p++) {
        if (Math.floor((p * live.length) / keys.partitions) === at) mine.add(p);
      }
      if (this.#closed) return;
      for (const p of [...this.#held.keys()]) if (!mine.has(p)) this.#handOver(p);
      // Each take by itself too: a slow master delays only its own partitions.
      await Promise.all(
        [...mine]
          .filter((p) => !this.#held.has(p) && !this.#leaving.has(p))
          .map(async (p) => {
            if ((await this.#lease(p, ttl, 'take')) !== 1) return;
            if (this.#closed) await this.#lease(p, '0', 'release');
            else this.#held.set(p, this.start(p));
          }),
      );
    } catch (error) {
      // Redis away or slow: the next heartbeat tries again; leases held stay until their TTL.
      options.logger.warn(
        { listener: this.listener },
        `partition lease round failed: ${scrubUrl((error as Error).message, options.url)}`,
      );
    }
  }

  #lease(p: number, ttl: string, op: 'take' | 'renew' | 'release'): Promise<number> {
    return this.#client.organismLease(
      this.host.keys.lease(this.listener, p),
      this.host.options.consumer,
      ttl,
      op,
    );
  }

  /** Stops reading p; once nothing of it runs here, its lease goes. */
  #handOver(p: number): void {
    const reader = this.#held.get(p)!;
    this.#held.delete(p);
    this.#leaving.set(p, reader);
    void (async () => {
      // No deadline: the lease is renewed as long as the partition's entries run here.
      await reader.stop(undefined, true);
      while (!this.#closed && reader.inFlightIds().length > 0) {
        await new Promise((resolve) => setTimeout(resolve, this.host.options.heartbeatMs));
      }
      if (this.#leaving.get(p) !== reader) return;
      this.#leaving.delete(p);
      if (!this.#closed) await this.#lease(p, '0', 'release').catch(() => 0);
    })();
  }

  /**
   * Another daemon holds p now: stop reading it at once (what runs still finishes). Only when
   * `reader` still reads it: a renewal answered after p was released and taken again is stale.
   */
  #lost(p: number, reader: StreamReader): void {
    if (this.#held.get(p) === reader) this.#held.delete(p);
    else if (this.#leaving.get(p) === reader) this.#leaving.delete(p);
    else return;
    this.host.options.logger.warn(
      { listener: this.listener, partition: p },
      'partition lease taken by another daemon while this one missed its heartbeats; it stops reading there',
    );
    void reader.stop();
  }

  /**
   * Stops every reader (until `deadline`), then releases the leases and leaves the set, so the
   * others take the partitions at their next heartbeat instead of after the TTL.
   */
  async close(deadline: number): Promise<void> {
    this.#closed = true;
    if (this.#ticking) await within(this.#ticking, deadline - Date.now());
    const readers = [...this.#held, ...this.#leaving];
    await Promise.all(readers.map(([, r]) => r.stop(deadline)));
    this.#held.clear();
    this.#leaving.clear();
    if (this.host.client.status !== 'ready') return;
    const { keys, options } = this.host;
    const leave = Promise.all([
      ...readers.map(([p]) => this.#lease(p, '0', 'release')),
      this.#client.organismMembers(
        keys.members(this.listener),
        options.consumer,
        String(options.claimIdleMs),
        'leave',
      ),
    ]);
    // Redis away or slow: the leases expire on their own instead.
    await within(leave, deadline - Date.now());
  }
}
