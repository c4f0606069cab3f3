/** Shared by the Redis benches: whether a redis-server answers, so a bench without one is skipped, not failed. */
import { Redis } from 'ioredis';

/** True when a PING to `url` is answered; one try, no reconnect, no error logged. */
export async function redisAnswers(url: string): Promise<boolean> {
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
  probe.on('error', () => {});
  try {
    await probe.connect();
    await probe.ping();
    return true;
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}
