/**
 * A Redis without a password, and programs that can reach it. `network: true` (and `sandbox: none`)
 * gives a program the host's network, and nothing but Redis's own authentication stands between
 * such a program and the organism's keys: bus streams (messages with any sender), thread state,
 * rate-limit buckets, shared revocations. Approvals and once-only effects are sealed (src/state),
 * so a forgery there is refused; the rest is not, and cannot be from inside the daemon. The
 * operator is told at start, naming who can reach it and what to do.
 */
import type { OrganismConfig } from '../config/types.ts';
import { redisAddress } from '../kv/address.ts';
import { isClusterUrl, redisUrlPassword } from '../redis-url.ts';

/** Who runs programs with the host's network: `listener <name> (run_command network: true)`, ... */
export function networkedPrograms(config: Pick<OrganismConfig, 'listeners' | 'mcp_servers'>): string[] {
  const out: string[] = [];
  for (const listener of config.listeners) {
    if (!listener.tools?.includes('run_command')) continue;
    const run = (listener.tool_config?.run_command ?? {}) as { network?: unknown; sandbox?: unknown };
    if (run.network === true) out.push(`listener ${listener.name} (run_command network: true)`);
    else if (run.sandbox === 'none') out.push(`listener ${listener.name} (run_command sandbox: none)`);
  }
  for (const server of config.mcp_servers ?? []) {
    if (server.command === undefined) continue; // an HTTP server runs nothing here
    if (server.network === true) out.push(`MCP server ${server.name} (network: true)`);
    else if (server.sandbox === 'none') out.push(`MCP server ${server.name} (sandbox: none)`);
  }
  return out;
}

/** Redis URLs the organism uses that carry no password, as host:port. */
export function openRedis(config: Pick<OrganismConfig, 'bus'> & { kv?: { url?: string } }): string[] {
  const urls = [config.bus?.transport === 'redis' ? config.bus.url : undefined, config.kv?.url];
  const open = new Set<string>();
  for (const url of urls) {
    if (typeof url !== 'string') continue;
    if (!isClusterUrl(url) && !URL.canParse(url)) continue; // the loader reports an unparseable URL
    if (redisUrlPassword(url) === '') open.add(redisAddress(url));
  }
  return [...open];
}

/** The start-up warning, or null when no program can reach a Redis without a password. */
export function redisExposureWarning(
  config: Pick<OrganismConfig, 'listeners' | 'mcp_servers' | 'bus'> & { kv?: { url?: string } },
): string | null {
  const redis = openRedis(config);
  if (redis.length === 0) return null;
  const programs = networkedPrograms(config);
  if (programs.length === 0) return null;
  return `Redis ${redis.join(', ')} has no password in its URL, and ${programs.join(', ')} can reach it over the host's network: such a program can write the organism's streams, thread state, rate limits and revocations (approvals and once-only effects are sealed and a forgery is refused). Give Redis a password (requirepass or an ACL user, in the URL through \${VAR}), or keep those programs off the network.`;
}
