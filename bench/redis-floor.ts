/**
 * Child process of bench/redis.ts: the floor, the bare library doing the least work for the
 * daemons' traffic. One client XREADGROUPs a batch (readBatch at most), XACKs it and XADDs the
 * same bytes back, with `inFlight` messages circulating; after `warmMs` it counts for `seconds`
 * and prints `{"perSecond": n}`. A process of its own, as each daemon is, so neither side runs
 * behind what another bench left in its process.
 * Args: url inFlight readBatch warmMs seconds
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { encodeMessage } from '../src/bus/transport/redis/codec.ts';
import { buildEnvelope } from '../src/xml/envelope.ts';

const [url = '', inFlightArg = '64', readBatchArg = '32', warmArg = '1500', secondsArg = '3'] =
  process.argv.slice(2);
const READ_BATCH = Number(readBatchArg);
const WARM_MS = Number(warmArg);
const SECONDS = Number(secondsArg);

/** Messages a second the floor moved with `inFlight` circulating. */
async function floorPerSecond(inFlight: number): Promise<number> {
  const client = new Redis(url, { enableAutoPipelining: true, protocol: 2 });
  const key = `organism-bench-floor:${randomUUID()}`;
  const fields = encodeMessage({
    id: 'bench-1',
    thread: '2b1c8f0e-6a0c-4e52-9a53-4f3f5b3c9d11',
    frame: 'f-1',
    from: 'pinger',
    to: 'pinger',
    tag: 'ping',
    envelope: buildEnvelope(
      { from: 'pinger', to: 'pinger', thread: '2b1c8f0e-6a0c-4e52-9a53-4f3f5b3c9d11' },
      '<ping><text>Hello, Ada!</text><n>1</n></ping>',
    ),
    kind: 'message',
    hop: 1,
    time: Date.now(),
  });
  try {
    await client.call('XGROUP', 'CREATE', key, 'g', '0', 'MKSTREAM');
    await Promise.all(Array.from({ length: inFlight }, () => client.xadd(key, '*', ...fields)));
    let acked = 0;
    const pass = async () => {
      const reply = (await client.call(
        'XREADGROUP',
        'GROUP',
        'g',
        'c',
        'COUNT',
        String(READ_BATCH),
        'STREAMS',
        key,
        '>',
      )) as Array<[string, Array<[string, string[]]>]> | null;
      const entries = reply?.[0]?.[1] ?? [];
      if (entries.length === 0) return;
      await Promise.all([
        client.xack(key, 'g', ...entries.map(([id]) => id)),
        ...entries.map(([, f]) => client.xadd(key, '*', ...f)),
      ]);
      acked += entries.length;
    };
    const warmUntil = Date.now() + WARM_MS;
    while (Date.now() < warmUntil) await pass();
    acked = 0;
    const t0 = process.hrtime.bigint();
    const end = Date.now() + SECONDS * 1000;
    while (Date.now() < end) await pass();
    return acked / (Number(process.hrtime.bigint() - t0) / 1e9);
  } finally {
    await client.del(key);
    client.disconnect();
  }
}

process.stdout.write(JSON.stringify({ perSecond: await floorPerSecond(Number(inFlightArg)) }));
process.exit(0);
