/**
 * What a Redis URL of organism.yaml names: one server (`redis://` or `rediss://`, as ioredis takes
 * it) or a Redis Cluster given by seed nodes, `redis+cluster://[user:password@]host:port,host:port`
 * (`rediss+cluster://` for TLS). One seed is enough (the client learns the rest from it); several
 * let a daemon start while one of them is down. A leaf module (no ioredis).
 */
import { TransportError } from './errors.ts';

export interface ClusterTarget {
  nodes: Array<{ host: string; port: number }>;
  username?: string;
  password?: string;
  tls: boolean;
}

const CLUSTER = /^(rediss?)\+cluster:\/\/(?:([^@/]*)@)?([^/?#]*)\/?$/;

/** Whether `url` names a Redis Cluster (redis+cluster:// or rediss+cluster://). */
export function isClusterUrl(url: string): boolean {
  return /^rediss?\+cluster:\/\//.test(url);
}

/** The seed nodes and credentials of a cluster URL; throws a TransportError naming what is wrong. */
export function parseClusterUrl(url: string, where = 'bus.url'): ClusterTarget {
  const m = CLUSTER.exec(url);
  if (!m) {
    throw new TransportError(
      'transport.invalid_option',
      `${where}: a cluster URL is redis+cluster://[user:password@]host:port[,host:port...] with no path (a cluster has no database number)`,
    );
  }
  const [, scheme, auth, hosts] = m;
  const nodes = hosts!.split(',').map((entry) => {
    // host:port, [v6 address]:port, or a host alone (port 6379).
    const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+))(?::(\d{1,5}))?$/.exec(entry);
    const port = Number(m?.[3] ?? 6379);
    if (!m || port < 1 || port > 65_535) {
      throw new TransportError(
        'transport.invalid_option',
        `${where}: '${entry}' is not a host:port seed node (seeds are separated by commas)`,
      );
    }
    return { host: (m[1] ?? m[2])!, port };
  });
  const target: ClusterTarget = { nodes, tls: scheme === 'rediss' };
  if (auth) {
    const colon = auth.indexOf(':');
    const user = colon >= 0 ? auth.slice(0, colon) : '';
    const password = colon >= 0 ? auth.slice(colon + 1) : auth;
    if (user) target.username = decodeURIComponent(user);
    if (password) target.password = decodeURIComponent(password);
  }
  return target;
}

/** The password a Redis URL carries ('' when none), single server or cluster. */
export function redisUrlPassword(url: string): string {
  if (isClusterUrl(url)) {
    try {
      return parseClusterUrl(url).password ?? '';
    } catch {
      return '';
    }
  }
  try {
    return decodeURIComponent(new URL(url).password);
  } catch {
    return '';
  }
}
