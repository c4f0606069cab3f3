/**
 * Many live threads: one bus (a fresh process, for a clean RSS) holding 100,000 threads, each
 * with a message waiting in a listener's queue and a little history, against the same with 1,000.
 * Targets: RSS at 100k at most 300 MB; inject and hop p99 at 100k no worse than at 1k beyond
 * noise (nothing per hop or per injection walks every thread). bench/threads-child.ts measures.
 */
import { bareNodeRssMb, round, runChild } from './support.ts';

const MANY = 100_000;
const FEW = 1_000;

export async function* run(): AsyncIterable<Record<string, unknown>> {
  const few = JSON.parse(await runChild('./threads-child.ts', [String(FEW)])) as Record<string, number>;
  const many = JSON.parse(await runChild('./threads-child.ts', [String(MANY)])) as Record<string, number>;
  yield {
    name: 'threads',
    rss_mb_at_100k_threads: many.rss_mb,
    rss_mb_at_1k_threads: few.rss_mb,
    heap_used_mb_at_100k_threads: many.heap_used_mb,
    bytes_per_thread: round(((many.heap_used_mb! - few.heap_used_mb!) * 1048576) / (MANY - FEW), 0),
    inject_us_p99_at_100k: many.inject_us_p99,
    inject_us_p99_at_1k: few.inject_us_p99,
    hop_us_p99_at_100k: many.hop_us_p99,
    hop_us_p99_at_1k: few.hop_us_p99,
    hop_us_p50_at_100k: many.hop_us_p50,
    hop_us_p50_at_1k: few.hop_us_p50,
    messages_waiting_at_100k: many.waiting,
    bare_node_rss_mb: await bareNodeRssMb(),
    target_rss_mb: 300,
  };
}
