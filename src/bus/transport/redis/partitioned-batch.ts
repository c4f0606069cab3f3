/**
 * The command batch of a transport with several partitions (partitions.ts): one CommandBatch per
 * partition, and every operation names a key (a stream or a thread) and goes to the batch of that
 * key's hash tag; a message's thread state and its XADD share their thread's partition, so they
 * still go in one script, in order. Operations of different partitions have no order between them,
 * and need none: nothing the bus writes for one thread depends on another's.
 *
 * When the turn ends the partitions go together: one script call per Redis server, not one per
 * partition. A call's fixed cost (the EVALSHA, its header, the round trip) is most of what Redis
 * spends per message at small batches, and N partitions cut the turn's work into N small batches.
 * On one Redis that is one call for all of them; on a cluster, one per master, grouping the
 * partitions by the node the client's slot map says serves their slot, and the call runs the
 * script flagged to touch keys of several slots of that node (Redis 7). When the map is stale (a
 * failover, a resharding), the script finds a partition's key not served there before it does
 * anything and answers 'moved': each partition of that call is then sent on its own (the cluster
 * client follows MOVED and ASK for it), and the slot map is refreshed.
 */

import type { Redis } from 'ioredis';
import type { ClusterView } from '../../../redis-client.ts';
import {
  answer,
  type BatchCall,
  type CommandBatch,
  type CommandBatchOptions,
  callBatch,
  corked,
  type ThreadSettings,
} from './batch.ts';
import { keySlot } from './partitions.ts';
import type { LoadReply, ReadEntry } from './types.ts';

/** Errors of a merged call that mean "not all of these slots are here": nothing ran. */
const NOT_HERE = /CROSSSLOT|MOVED|ASK|non local key|compiling script|shebang/;

export class PartitionedBatch {
  readonly batches: readonly CommandBatch[];
  readonly #byTag = new Map<string, CommandBatch>();
  /** Each partition's cluster slot. */
  readonly #slots: number[];
  readonly #client: Redis & ClusterView;
  #scheduled: NodeJS.Immediate | undefined;
  /** Merged calls sent and not yet answered (drain waits for them). */
  #last: Promise<unknown> = Promise.resolve();
  /** Off once Redis refused the cross-slot script (before Redis 7): each partition goes alone. */
  #merge = true;

  /**
   * `batchOf(p, defer)` makes partition p's batch (whose keys' hash tag is `tags[p]`), passing
   * `defer` on so the batches send together.
   */
  constructor(
    tags: readonly string[],
    batchOf: (partition: number, defer: CommandBatchOptions['defer']) => CommandBatch,
  ) {
    const defer = (): void => {
      this.#scheduled ??= setImmediate(this.#flushLater);
    };
    this.batches = tags.map((_, p) => batchOf(p, defer));
    for (const [p, tag] of tags.entries()) this.#byTag.set(tag, this.batches[p]!);
    this.#slots = tags.map((tag) => keySlot(`{${tag}}`));
    this.#client = this.batches[0]!.client;
  }

  /** The batch of a key's hash tag (a key of no partition: partition 0's). */
  #of(key: string): CommandBatch {
    const open = key.indexOf('{');
    const close = key.indexOf('}', open + 1);
    return (open >= 0 && close > open && this.#byTag.get(key.slice(open + 1, close))) || this.batches[0]!;
  }

  get pending(): boolean {
    return this.batches.some((b) => b.pending);
  }

  hset(key: string, field: string, value: string): void {
    this.#of(key).hset(key, field, value);
  }

  prune(threadKey: string, frameId: string): void {
    this.#of(threadKey).prune(threadKey, frameId);
  }

  stop(threadKey: string): void {
    this.#of(threadKey).stop(threadKey);
  }

  pexpire(key: string, ms: string): void {
    this.#of(key).pexpire(key, ms);
  }

  follow(threadKey: string, until: number, ms: number): void {
    this.#of(threadKey).follow(threadKey, until, ms);
  }

  /** A notice on the events channel: any partition's script can publish it. */
  event(text: string): void {
    this.batches[0]!.event(text);
  }

  frame(threadKey: string, field: string, record: string): void {
    this.#of(threadKey).frame(threadKey, field, record);
  }

  hop(threadKey: string, refresh: boolean): void {
    this.#of(threadKey).hop(threadKey, refresh);
  }

  inFlight(threadKey: string): void {
    this.#of(threadKey).inFlight(threadKey);
  }

  history(threadKey: string, entry: string, refresh: boolean): void {
    this.#of(threadKey).history(threadKey, entry, refresh);
  }

  xadd(stream: string, record: string): Promise<number> {
    return this.#of(stream).xadd(stream, record);
  }

  settle(threadKey: string): Promise<number> {
    return this.#of(threadKey).settle(threadKey);
  }

  load(threadKey: string, refresh: boolean, frame: string): Promise<LoadReply> {
    return this.#of(threadKey).load(threadKey, refresh, frame);
  }

  read(stream: string, count: number | (() => number), plain = false, history = true): Promise<ReadEntry[]> {
    return this.#of(stream).read(stream, count, plain, history);
  }

  xack(stream: string, id: string): Promise<void> {
    return this.#of(stream).xack(stream, id);
  }

  beat(stream: string, ids: readonly string[]): Promise<string[]> {
    return this.#of(stream).beat(stream, ids);
  }

  /**
   * Sends what is queued: at the end of the turn every partition, together per Redis server; early
   * (a batch grew big) each batch as it is, its reads left for the end of the turn. The
   * connections are corked meanwhile: what goes to one server leaves in one write.
   */
  flush(early = false): void {
    corked(this.#client, () => this.#flush(early));
  }

  #flush(early: boolean): void {
    if (early) {
      for (const batch of this.batches) batch.flush(true);
      return;
    }
    if (this.#scheduled) {
      clearImmediate(this.#scheduled);
      this.#scheduled = undefined;
    }
    const groups = new Map<string, Array<[CommandBatch, BatchCall]>>();
    for (const [p, batch] of this.batches.entries()) {
      const call = batch.take();
      if (!call) continue;
      const node = call.keys.length > 0 ? this.#nodeOf(p) : undefined;
      if (node === undefined) {
        batch.send(call);
        continue;
      }
      const group = groups.get(node);
      if (group) group.push([batch, call]);
      else groups.set(node, [[batch, call]]);
    }
    for (const group of groups.values()) {
      if (group.length === 1) group[0]![0].send(group[0]![1]);
      else this.#sendMerged(group);
    }
  }

  /** Which server serves partition p now, as far as the client knows (undefined: send it alone). */
  #nodeOf(p: number): string | undefined {
    if (!this.#merge) return undefined;
    if (!this.#client.isCluster) return '';
    return this.#client.slots?.[this.#slots[p]!]?.[0];
  }

  /** One script call for partitions on one server: the first's keys declared, the rest after 'part'. */
  #sendMerged(group: Array<[CommandBatch, BatchCall]>): void {
    const [, first] = group[0]!;
    const cluster = this.#client.isCluster === true;
    const argv = first.header.slice();
    if (cluster) {
      argv.push('own', String(group.length - 1));
      for (let g = 1; g < group.length; g++) argv.push(group[g]![1].keys[0]!);
    }
    for (const arg of first.args) argv.push(arg);
    const waiters = first.waiters.slice();
    for (let g = 1; g < group.length; g++) {
      const { keys, header, args, waiters: more } = group[g]![1];
      // header[4], [9], [10]: the thread prefix, following key and history prefix (makeHeader).
      argv.push('part', String(keys.length), header[4]!, header[9]!, header[10]!);
      for (const key of keys) argv.push(key);
      for (const arg of args) argv.push(arg);
      for (const w of more) waiters.push(w);
    }
    const alone = (): Promise<unknown> => {
      this.#client.refreshSlotsCache?.();
      // Their plain reads went already, behind the merged call.
      return Promise.all(group.map(([batch, call]) => batch.send({ ...call, reads: [] })));
    };
    const sent = callBatch(this.#client, first.keys, [argv], cluster).then(
      (reply) => {
        if (reply === 'moved') return alone();
        answer(waiters, reply, (error) => this.batches[0]!.reportError(error));
        return undefined;
      },
      (error: Error) => {
        if (NOT_HERE.test(error.message)) {
          if (/compiling script|shebang/.test(error.message)) this.#merge = false;
          return alone();
        }
        for (const w of waiters) w.reject(error);
        this.batches[0]!.reportError(error);
        return undefined;
      },
    );
    const last = this.#last;
    this.#last = Promise.all([last, sent]).catch(() => undefined);
    for (const [batch, call] of group) batch.sendReads(call.reads);
  }

  readonly #flushLater = (): void => {
    this.#scheduled = undefined;
    this.flush();
  };

  /** Sends what is queued and resolves when Redis has answered every call sent so far. */
  async drain(): Promise<void> {
    this.flush();
    await this.#last;
    await Promise.all(this.batches.map((b) => b.drain()));
  }

  useThreadsBy(settingsFor: (partition: number) => ThreadSettings): void {
    for (const batch of this.batches) batch.useThreadsBy(settingsFor);
  }
}
