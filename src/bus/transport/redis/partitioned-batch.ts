/**
 * The command batch of a transport with several partitions (partitions.ts): one CommandBatch per
 * partition, each going to Redis as its own script call, since a script may only touch keys of one
 * slot on a cluster. Every operation names a key (a stream or a thread), and goes to the batch of
 * that key's hash tag; a message's thread state and its XADD share their thread's partition, so
 * they still go in one script, in order. Operations of different partitions have no order
 * between them, and need none: nothing the bus writes for one thread depends on another's.
 */
import type { CommandBatch, ThreadSettings } from './batch.ts';
import type { LoadReply, ReadEntry } from './types.ts';

export class PartitionedBatch {
  readonly #byTag = new Map<string, CommandBatch>();

  /** `batches[p]` carries partition p's keys, whose hash tag is `tags[p]`. */
  constructor(
    readonly batches: readonly CommandBatch[],
    tags: readonly string[],
  ) {
    for (const [p, tag] of tags.entries()) this.#byTag.set(tag, batches[p]!);
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

  hdel(key: string, field: string): void {
    this.#of(key).hdel(key, field);
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

  read(stream: string, count: number | (() => number)): Promise<ReadEntry[]> {
    return this.#of(stream).read(stream, count);
  }

  xack(stream: string, id: string): Promise<void> {
    return this.#of(stream).xack(stream, id);
  }

  beat(stream: string, ids: readonly string[]): Promise<string[]> {
    return this.#of(stream).beat(stream, ids);
  }

  flush(early = false): void {
    for (const batch of this.batches) batch.flush(early);
  }

  drain(): Promise<void> {
    return Promise.all(this.batches.map((b) => b.drain())).then(() => undefined);
  }

  useThreadsBy(settingsFor: (partition: number) => ThreadSettings): void {
    for (const batch of this.batches) batch.useThreadsBy(settingsFor);
  }
}
