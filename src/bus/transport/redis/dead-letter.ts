/**
 * The dead-letter stream: entries delivered `maxDeliveries` times without an acknowledgement are
 * moved here with the reason, so one poison message cannot cycle through the daemons forever while
 * the rest of its listener's stream flows on. The move is one Lua script (lua/dead-letter.lua: ack in the group, append
 * to the dead stream, count), so two daemons' reapers racing over the same entry record it once.
 * `readDeadLetters` and `deadLetterCount` are what the HTTP API and metrics call.
 */
import type { Redis } from 'ioredis';
import { TransportError } from '../../../errors.ts';
import type { Message } from '../../message.ts';
import { decodeRecord } from './codec.ts';
import type { BusKeys } from './options.ts';

export interface DeadLetter {
  /** Id of the dead-letter entry (its time part is when it was moved). */
  id: string;
  time: string;
  listener: string;
  /** Id of the entry in the listener's stream. */
  entry: string;
  deliveries: number;
  reason: string;
  /** Consumer (daemon) that held the entry last. */
  consumer: string;
  /** The message, when the entry was one; absent for an entry that could not be decoded. */
  message?: Message;
  /** The entry's raw fields as JSON, when it was not a message. */
  raw?: string;
}

type Ioredis = Pick<Redis, 'call'>;

/** A dead-letter entry id (a page cursor): `<ms>-<seq>`. */
export const DEAD_LETTER_ID = /^\d{1,20}-\d{1,20}$/;

/** Newest first, at most `count`; with `before` (an entry id), only entries older than it. */
export async function readDeadLetters(
  client: Ioredis,
  keys: BusKeys,
  count = 100,
  before?: string,
): Promise<DeadLetter[]> {
  if (before !== undefined && !DEAD_LETTER_ID.test(before)) {
    throw new TransportError(
      'transport.invalid_option',
      `a dead-letter cursor looks like 1700000000000-0, not '${before}'`,
    );
  }
  const end = before === undefined ? '+' : `(${before}`;
  // With partitions each has its own dead-letter stream: the newest `count` of all of them.
  const pages = await Promise.all(
    keys.prefixes.map(
      (_, p) =>
        client.call('XREVRANGE', keys.deadOf(p), end, '-', 'COUNT', String(count)) as Promise<
          Array<[string, string[]]>
        >,
    ),
  );
  const rows = pages.length === 1 ? pages[0]! : pages.flat().sort(byIdDescending).slice(0, count);
  return rows.map(([id, fields]) => {
    const f = new Map<string, string>();
    for (let i = 0; i + 1 < fields.length; i += 2) f.set(fields[i]!, fields[i + 1]!);
    const letter: DeadLetter = {
      id,
      time: new Date(Number(id.split('-')[0])).toISOString(),
      listener: f.get('listener') ?? '',
      entry: f.get('entry') ?? '',
      deliveries: Number(f.get('deliveries') ?? 0),
      reason: f.get('reason') ?? '',
      consumer: f.get('consumer') ?? '',
    };
    const body = f.get('m');
    if (body) {
      try {
        letter.message = decodeRecord(body);
      } catch {
        letter.raw = body;
      }
    }
    const raw = f.get('raw');
    if (raw) letter.raw = raw;
    return letter;
  });
}

/** Entries ever dead-lettered in this organism (the stream keeps only the newest). */
export async function deadLetterCount(client: Ioredis, keys: BusKeys): Promise<number> {
  const counts = await Promise.all(keys.prefixes.map((_, p) => client.call('GET', keys.deadCountOf(p))));
  return counts.reduce<number>((sum, n) => sum + Number(n ?? 0), 0);
}

function byIdDescending(a: [string, unknown], b: [string, unknown]): number {
  const [am, as] = a[0].split('-').map(BigInt) as [bigint, bigint];
  const [bm, bs] = b[0].split('-').map(BigInt) as [bigint, bigint];
  return am === bm ? Number(bs - as) : bm > am ? 1 : -1;
}
