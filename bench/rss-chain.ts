/** Child process: a forward chain of N hops on one thread, then this process's RSS after GC. */
import { selfLoopBus } from './support-bus.ts';

const hops = Number(process.argv[2] ?? '10000');
const loop = await selfLoopBus(hops, false, 1_000);
const baseline = process.memoryUsage().rss;
await loop.run(1);
(globalThis as { gc?: () => void }).gc?.();
const { rss, heapUsed, heapTotal } = process.memoryUsage();
await loop.stop();
process.stdout.write(
  JSON.stringify({
    rss_mb_after_10k_hop_chain: Math.round((rss / 1024 / 1024) * 10) / 10,
    rss_mb_before_chain: Math.round((baseline / 1024 / 1024) * 10) / 10,
    heap_used_mb_after_chain: Math.round((heapUsed / 1024 / 1024) * 10) / 10,
    heap_total_mb_after_chain: Math.round((heapTotal / 1024 / 1024) * 10) / 10,
    hops,
  }),
);
