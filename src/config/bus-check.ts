/**
 * Checks of the bus section the schema cannot express: partitions only with the Redis transport,
 * and a cluster URL's seed list well formed (host:port entries, no database number).
 */
import { type ConfigIssue, TransportError } from '../errors.ts';
import { isClusterUrl, parseClusterUrl } from '../redis-url.ts';
import type { ConfigSource } from './source.ts';

type Raw = Record<string, unknown>;

const isObject = (v: unknown): v is Raw => typeof v === 'object' && v !== null && !Array.isArray(v);

export function checkBus(data: unknown, source: ConfigSource): ConfigIssue[] {
  const bus = isObject(data) && isObject(data.bus) ? data.bus : undefined;
  if (!bus) return [];
  const issues: ConfigIssue[] = [];
  if (typeof bus.partitions === 'number' && bus.partitions > 1 && bus.transport !== 'redis') {
    issues.push(
      source.issue(
        ['bus', 'partitions'],
        `bus.partitions: ${bus.partitions} splits the Redis streams, so it needs bus.transport: redis (the memory transport has one daemon and one queue per listener)`,
      ),
    );
  }
  if (typeof bus.url === 'string' && isClusterUrl(bus.url)) {
    try {
      parseClusterUrl(bus.url);
    } catch (error) {
      if (!(error instanceof TransportError)) throw error;
      issues.push(source.issue(['bus', 'url'], error.message));
    }
  }
  return issues;
}
