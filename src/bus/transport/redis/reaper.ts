/**
 * The reaper's work on one stream (RedisTransport runs it every reaperIntervalMs): dead-letter
 * entries delivered too often, take over idle ones (a dead daemon's, a failed delivery's), and trim
 * what the group has acknowledged. Its own file so the transport stays about publish and deliver.
 */
import type { Redis } from 'ioredis';
import type { BusKeys, ResolvedRedisBusOptions } from './options.ts';
import type { StreamReader } from './reader.ts';
import { DEAD_LETTER_SCRIPT } from './scripts.ts';
import type { RedisTransportStats, StreamEntry } from './types.ts';

export interface ReaperHost {
  readonly client: Redis;
  readonly keys: BusKeys;
  readonly options: ResolvedRedisBusOptions;
  readonly stats: RedisTransportStats;
  notifyDeadLetter(body: string): void;
}

type RedisWithScripts = Redis & {
  organismDeadLetter(...args: string[]): Promise<[number, string] | null>;
};

export class Reaper {
  /** The one suspect entry (delivered twice or more) this daemon is delivering now, if any. */
  #suspect: { reader: StreamReader; id: string } | undefined;

  constructor(private readonly host: ReaperHost) {
    host.client.defineCommand('organismDeadLetter', { numberOfKeys: 4, lua: DEAD_LETTER_SCRIPT });
  }

  /**
   * Sorts a stream's idle entries (XPENDING with IDLE, which also gives delivery counts): those
   * delivered maxDeliveries times go to the dead-letter stream; the rest are taken over here.
   *
   * An entry delivered twice or more is a suspect: the daemon that had it may have died of it (a
   * poison message that crashes its handler's process). Suspects are taken one at a time per
   * daemon, so a poison message crashes a daemon alone and the messages it would have taken
   * down with it are not charged a delivery for its crash; with max_deliveries of 3 or more they
   * finish. When there are no suspects, everything idle is claimed with XAUTOCLAIM.
   */
  async reapStream(reader: StreamReader): Promise<void> {
    const { group, claimIdleMs, maxDeliveries } = this.host.options;
    const fresh: string[] = [];
    const suspects: string[] = [];
    let start = '-';
    for (let page = 0; page < 10; page++) {
      const rows = (await this.host.client.call(
        'XPENDING',
        reader.stream,
        group,
        'IDLE',
        String(claimIdleMs),
        start,
        '+',
        '100',
      )) as Array<[string, string, number, number]>;
      for (const [id, owner, , deliveries] of rows) {
        if (reader.has(id)) continue;
        if (deliveries >= maxDeliveries) await this.#deadLetter(reader, id, owner, deliveries);
        else if (deliveries >= 2) suspects.push(id);
        else fresh.push(id);
      }
      if (rows.length < 100) break;
      start = `(${rows[rows.length - 1]![0]}`;
    }
    if (suspects.length === 0) {
      if (fresh.length > 0) await this.#autoClaim(reader);
      return;
    }
    if (fresh.length > 0 && reader.free > 0) {
      await this.#claim(reader, fresh.slice(0, reader.free));
    }
    if (this.#suspect && !this.#suspect.reader.has(this.#suspect.id)) this.#suspect = undefined;
    if (!this.#suspect && reader.free > 0) {
      for (const id of suspects) {
        if ((await this.#claim(reader, [id])) > 0) {
          this.#suspect = { reader, id };
          break;
        }
      }
    }
  }

  async #deadLetter(reader: StreamReader, id: string, owner: string, deliveries: number): Promise<void> {
    const { group, maxDeliveries, deadLetterMaxLength } = this.host.options;
    const moved = await (this.host.client as RedisWithScripts).organismDeadLetter(
      reader.stream,
      this.host.keys.deadOf(reader.partition),
      this.host.keys.deadCountOf(reader.partition),
      this.host.keys.failure(id, reader.partition),
      group,
      id,
      reader.listener,
      String(deliveries),
      `delivered ${deliveries} times without an acknowledgement (bus.max_deliveries is ${maxDeliveries})`,
      String(deadLetterMaxLength),
      owner,
    );
    if (!moved) return; // another daemon's reaper was first
    this.host.stats.deadLettered++;
    this.host.options.logger.error(
      { listener: reader.listener, entry: id, deliveries },
      'stream entry moved to the dead-letter stream',
    );
    this.host.notifyDeadLetter(moved[1]);
  }

  /** XCLAIM of chosen entries (still idle: another daemon may have been first); returns how many. */
  async #claim(reader: StreamReader, ids: string[]): Promise<number> {
    const { group, consumer, claimIdleMs } = this.host.options;
    const entries = (await this.host.client.call(
      'XCLAIM',
      reader.stream,
      group,
      consumer,
      String(claimIdleMs),
      ...ids,
    )) as StreamEntry[];
    return this.#took(reader, entries);
  }

  /** Takes over idle entries with XAUTOCLAIM, following its cursor until 0-0, as far as free slots allow. */
  async #autoClaim(reader: StreamReader): Promise<void> {
    const { group, consumer, claimIdleMs } = this.host.options;
    let cursor = '0-0';
    for (let round = 0; round < 100 && reader.free > 0 && !reader.stopping; round++) {
      const [next, entries] = (await this.host.client.call(
        'XAUTOCLAIM',
        reader.stream,
        group,
        consumer,
        String(claimIdleMs),
        cursor,
        'COUNT',
        String(reader.free),
      )) as [string, StreamEntry[], string[]?];
      this.#took(reader, entries);
      cursor = next;
      if (cursor === '0-0') return;
    }
  }

  #took(reader: StreamReader, entries: StreamEntry[]): number {
    const live = entries.filter((e) => e !== null && e[1] !== null);
    if (live.length > 0) {
      this.host.stats.claimed += live.length;
      this.host.options.logger.info(
        { listener: reader.listener, count: live.length },
        'claimed idle stream entries',
      );
      reader.dispatch(live, true);
    }
    return live.length;
  }

  /**
   * Drops entries every one of which has been delivered and acknowledged: those below both the
   * oldest pending entry and the group's last delivered id. Nothing the group still owes is touched.
   */
  async trim(stream: string): Promise<void> {
    const { group } = this.host.options;
    const groups = (await this.host.client.call('XINFO', 'GROUPS', stream)) as unknown[][];
    const ours = groups.map(fieldMap).find((g) => g.get('name') === group);
    const lastDelivered = ours?.get('last-delivered-id');
    if (typeof lastDelivered !== 'string' || lastDelivered === '0-0') return;
    const summary = (await this.host.client.call('XPENDING', stream, group)) as [
      number,
      string | null,
      ...unknown[],
    ];
    const minId = summary[0] > 0 && summary[1] ? summary[1] : nextStreamId(lastDelivered);
    await this.host.client.call('XTRIM', stream, 'MINID', minId);
  }
}

function fieldMap(row: unknown[]): Map<string, unknown> {
  const map = new Map<string, unknown>();
  for (let i = 0; i + 1 < row.length; i += 2) map.set(String(row[i]), row[i + 1]);
  return map;
}

/** The smallest stream id above `id`. */
function nextStreamId(id: string): string {
  const [ms, seq] = id.split('-');
  return `${ms}-${BigInt(seq ?? '0') + 1n}`;
}
