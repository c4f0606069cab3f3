/**
 * The heartbeat: every heartbeatMs a daemon marks the entries it holds (being delivered, or handled
 * and being acknowledged) as alive, so their idle time in the consumer group stays below
 * claimIdleMs and no other daemon's reaper takes them, however long their handlers run. A daemon
 * that stops marking (killed, frozen) has its entries claimed a few missed heartbeats later.
 *
 * An entry is marked only while this consumer still owns it. Marking by a plain XCLAIM would take
 * back an entry another daemon claimed while this one was frozen (a long GC pause, a stalled
 * event loop, Redis out of reach for longer than claimIdleMs), and the two would then take it from
 * each other at every heartbeat. One script call marks every stream's entries and names those that
 * another consumer owns now: the handler here still finishes, and what it does twice is harmless
 * (its outputs carry the ids the other daemon's run derives too, side-effecting tools act once per
 * call id, and its ack only ends an entry whose work is done).
 */
import type { Redis } from 'ioredis';
import type { ResolvedRedisBusOptions } from './options.ts';
import type { StreamReader } from './reader.ts';

/**
 * KEYS: one stream per listener with entries in flight here. ARGV: group, consumer, then for each
 * stream how many ids follow and the ids. An entry pending for this consumer has its idle time
 * reset (XCLAIM to itself with JUSTID: no delivery counted, nothing read). Returns, per entry
 * pending for another consumer, its stream's index (1-based), its id and its owner. An entry no
 * longer pending at all was acknowledged (its ack is on its way back) or dead-lettered: skipped.
 */
const HEARTBEAT_SCRIPT = `
local group, me = ARGV[1], ARGV[2]
local taken = {}
local a = 3
for k = 1, #KEYS do
  local stream = KEYS[k]
  local n = tonumber(ARGV[a])
  local mine = {}
  for j = a + 1, a + n do
    local id = ARGV[j]
    local row = redis.call('XPENDING', stream, group, id, id, 1)[1]
    if row then
      if row[2] == me then
        mine[#mine + 1] = id
      else
        taken[#taken + 1] = k
        taken[#taken + 1] = id
        taken[#taken + 1] = row[2]
      end
    end
  end
  for j = 1, #mine, 500 do
    local claim = {stream, group, me, '0'}
    for x = j, math.min(j + 499, #mine) do claim[#claim + 1] = mine[x] end
    claim[#claim + 1] = 'JUSTID'
    redis.call('XCLAIM', unpack(claim))
  end
  a = a + n + 1
end
return taken
`;

type HeartbeatClient = Redis & {
  organismHeartbeat(numKeys: number, ...args: string[]): Promise<string[]>;
};

export interface HeartbeatStats {
  /** Entries this daemon held that another daemon had taken over when it next marked them. */
  lost: number;
}

export class Heartbeat {
  private beating = false;
  private last = 0;
  /** Ids already reported as taken over (logged once each; bounded). */
  private readonly reported = new Set<string>();

  constructor(
    private readonly client: Redis,
    private readonly options: ResolvedRedisBusOptions,
    private readonly stats: HeartbeatStats,
  ) {
    if (!(client as unknown as Partial<HeartbeatClient>).organismHeartbeat) {
      client.defineCommand('organismHeartbeat', { lua: HEARTBEAT_SCRIPT });
    }
  }

  /** Marks every entry the readers hold; one script call. Skipped while one is still out. */
  async beat(readers: Iterable<StreamReader>): Promise<void> {
    const now = Date.now();
    const late = this.last > 0 ? now - this.last - this.options.heartbeatMs : 0;
    this.last = now;
    if (late > this.options.claimIdleMs - this.options.heartbeatMs) {
      // The event loop was blocked (or the process stopped) past the point where others may claim.
      this.options.logger.warn(
        { late_ms: late, claim_idle_ms: this.options.claimIdleMs },
        'heartbeat late: this daemon was frozen long enough for others to take over its entries',
      );
    }
    if (this.beating || this.client.status !== 'ready') return;
    const keys: string[] = [];
    const held: StreamReader[] = [];
    const args: string[] = [this.options.group, this.options.consumer];
    for (const reader of readers) {
      const ids = reader.inFlightIds();
      if (ids.length === 0) continue;
      keys.push(reader.stream);
      held.push(reader);
      args.push(String(ids.length), ...ids);
    }
    if (keys.length === 0) return;
    this.beating = true;
    try {
      const taken = await (this.client as HeartbeatClient).organismHeartbeat(keys.length, ...keys, ...args);
      for (let i = 0; i + 2 < taken.length; i += 3) {
        const reader = held[Number(taken[i]) - 1];
        const id = taken[i + 1]!;
        if (!reader || this.reported.has(id) || !reader.has(id)) continue;
        if (this.reported.size >= 10_000) this.reported.clear();
        this.reported.add(id);
        this.stats.lost++;
        this.options.logger.warn(
          { listener: reader.listener, entry: id, owner: taken[i + 2] },
          'stream entry taken over by another daemon while this one missed its heartbeats; ' +
            'its handler here still finishes (outputs and tool calls keep their ids, so effects happen once)',
        );
      }
    } catch {
      // Redis unreachable or slow: the next beat tries again; the reader reports connection trouble.
    } finally {
      this.beating = false;
    }
  }
}
