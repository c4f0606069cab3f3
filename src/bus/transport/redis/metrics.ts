/**
 * Prometheus gauges for the Redis bus, registered once per registry and summed over the live
 * transports of this process (one in a daemon; tests may run several):
 * - organism_bus_dead_letters: messages ever dead-lettered in the organism (all daemons, from Redis);
 * - organism_bus_dead_lettered_here / _claimed_here / _acked_here / _lost_here: what this daemon did.
 */
import { Gauge, type Registry } from 'prom-client';
import type { RedisTransport } from './transport.ts';

const live = new Set<RedisTransport>();
const registered = new WeakSet<Registry>();

export function registerRedisBusMetrics(registry: Registry, transport: RedisTransport): () => void {
  live.add(transport);
  if (!registered.has(registry)) {
    registered.add(registry);
    const sum = (pick: (t: RedisTransport) => number) => [...live].reduce((n, t) => n + pick(t), 0);
    new Gauge({
      name: 'organism_bus_dead_letters',
      help: 'Messages moved to the dead-letter stream after bus.max_deliveries attempts (whole organism).',
      registers: [registry],
      async collect() {
        const first = live.values().next().value as RedisTransport | undefined;
        this.set(first ? await first.deadLetterCount().catch(() => 0) : 0);
      },
    });
    const local = (name: string, help: string, pick: (t: RedisTransport) => number) =>
      new Gauge({
        name,
        help,
        registers: [registry],
        collect() {
          this.set(sum(pick));
        },
      });
    local(
      'organism_bus_dead_lettered_here',
      'Messages this daemon moved to the dead-letter stream.',
      (t) => t.stats.deadLettered,
    );
    local(
      'organism_bus_claimed_here',
      'Stream entries this daemon took over from idle consumers.',
      (t) => t.stats.claimed,
    );
    local('organism_bus_acked_here', 'Stream entries this daemon acknowledged.', (t) => t.stats.acked);
    local(
      'organism_bus_lost_here',
      'Stream entries another daemon took over from this one while it missed its heartbeats (frozen).',
      (t) => t.stats.lost,
    );
  }
  return () => live.delete(transport);
}
