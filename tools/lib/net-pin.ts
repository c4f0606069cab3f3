/**
 * DNS for the network tools, and connections pinned to the addresses the web guard checked.
 *
 * The guard resolves a host and judges its addresses; if the connection then resolved the name
 * again, a DNS answer that changed in between (DNS rebinding) could send it to an address nobody
 * checked. So each hop gets its own undici Agent whose `connect.lookup` answers only with the
 * checked addresses, for the checked host name and nothing else. The URL keeps the host name, so
 * the Host header and TLS SNI / certificate check still use the name.
 */
import { promises as dns, type LookupAddress } from 'node:dns';
import type { Agent } from 'undici';
import { lazyRequire } from '../../src/lazy-require.ts';
import type { ToolServices } from '../../src/tools/types.ts';

/** undici on the first request, not when the tools load. */
export const undici = lazyRequire<typeof import('undici')>('undici');

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to all its addresses; the shape `resolveAndCheck` accepts as `lookup`. */
export type DnsLookup = (host: string) => Promise<ResolvedAddress[]>;

/** The system resolver (getaddrinfo, so /etc/hosts applies), every address in resolver order. */
export const systemLookup: DnsLookup = async (host) => {
  const found = await dns.lookup(host, { all: true, verbatim: true });
  return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/**
 * Key of the resolver in the tool resource cache. Production creates the system resolver; a test
 * (or an operator embedding Organism with its own DNS) hands a different one to the cache.
 */
export const DNS_LOOKUP_RESOURCE = 'net:dns-lookup';

export async function lookupFrom(services: ToolServices): Promise<DnsLookup> {
  return services.resources.get<DnsLookup>(DNS_LOOKUP_RESOURCE, () => systemLookup);
}

/** URL host names come bracketed for IPv6 and may end in a dot; compare them bare. */
function bareHost(host: string): string {
  return host
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

export interface PinnedAgentOptions {
  /** Time to wait for the response headers and between body chunks (the overall deadline is a signal). */
  timeoutMs: number;
}

/**
 * An Agent that can only connect to `addresses` and only for `host`. Any other name asked of it
 * fails, so a bug elsewhere cannot turn it into an open resolver.
 */
export function pinnedAgent(
  host: string,
  addresses: readonly ResolvedAddress[],
  options: PinnedAgentOptions,
): Agent {
  const expected = bareHost(host);
  const lookup = (hostname: string, opts: unknown, callback?: LookupCallback) => {
    const cb = (typeof opts === 'function' ? opts : callback) as LookupCallback;
    const o = (typeof opts === 'object' && opts !== null ? opts : {}) as { all?: boolean; family?: number };
    if (bareHost(hostname) !== expected) {
      const error: NodeJS.ErrnoException = new Error(
        `pinned connection for ${expected} was asked to resolve ${hostname}`,
      );
      error.code = 'ENOTFOUND';
      cb(error, '');
      return;
    }
    const family = o.family === 4 || o.family === 6 ? o.family : undefined;
    const list = family === undefined ? addresses : addresses.filter((a) => a.family === family);
    if (list.length === 0) {
      const error: NodeJS.ErrnoException = new Error(`no checked IPv${family} address for ${expected}`);
      error.code = 'ENOTFOUND';
      cb(error, '');
      return;
    }
    if (o.all)
      cb(
        null,
        list.map((a) => ({ address: a.address, family: a.family })),
      );
    else cb(null, list[0]!.address, list[0]!.family);
  };
  const { Agent } = undici();
  return new Agent({
    connect: { lookup: lookup as never },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    // One request per agent: no keep-alive socket outlives the hop it was checked for.
    pipelining: 0,
    connections: 1,
  });
}
