/**
 * The bus's Lua scripts. Each lives in `lua/<name>.lua` next to this file (what each takes and
 * returns is said at its top) and is read once, when this module loads; the modules that run one
 * define it as an ioredis command (`defineCommand`: EVALSHA, falling back to EVAL when Redis does
 * not have the script cached).
 */
import { readFileSync } from 'node:fs';

function script(name: string): string {
  return readFileSync(new URL(`./lua/${name}.lua`, import.meta.url), 'utf8');
}

/** Every command a daemon's bus sends Redis in one turn of the event loop (batch.ts). */
export const BATCH_SCRIPT: string = script('batch');

/** Moves one entry to the dead-letter stream, once however many reapers race over it (dead-letter.ts). */
export const DEAD_LETTER_SCRIPT: string = script('dead-letter');
