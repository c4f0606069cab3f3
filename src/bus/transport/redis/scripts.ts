/**
 * The bus's Lua scripts. Each lives in `lua/<name>.lua` next to this file (what each takes and
 * returns is said at its top) and is read once, when this module loads; the modules that run one
 * define it as an ioredis command (`defineCommand`: EVALSHA, falling back to EVAL when Redis does
 * not have the script cached), except the batch's, sent through script-call.ts the same way.
 */
import { readFileSync } from 'node:fs';

function script(name: string): string {
  return readFileSync(new URL(`./lua/${name}.lua`, import.meta.url), 'utf8');
}

/** Every command a daemon's bus sends Redis in one turn of the event loop (batch.ts). */
export const BATCH_SCRIPT: string = script('batch');

/**
 * The same script, allowed to touch keys of several slots as long as they live on the node it runs
 * on (Redis 7 script flags): one call carries the partitions a cluster master serves
 * (partitioned-batch.ts). The plain one stays for everything else, so Redis 6 still runs the bus.
 */
export const BATCH_SCRIPT_CROSS_SLOT: string = `#!lua flags=allow-cross-slot-keys\n${BATCH_SCRIPT}`;

/** A partition's changes from a position on, joined (thread-store.ts). */
export const CHANGES_SCRIPT: string = script('changes');

/** Moves one entry to the dead-letter stream, once however many reapers race over it (dead-letter.ts). */
export const DEAD_LETTER_SCRIPT: string = script('dead-letter');

/** Takes, renews or releases a partition lease (leases.ts). */
export const LEASE_SCRIPT: string = script('lease');

/** Marks a daemon alive among a listener's readers and lists the live ones (leases.ts). */
export const MEMBERS_SCRIPT: string = script('members');
