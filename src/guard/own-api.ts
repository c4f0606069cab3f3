/**
 * Where the daemons of this process listen, so the web guard refuses their API to every tool
 * whatever allow_loopback says: a tool that called it would act as a person (approve a waiting
 * call, inject, reload). The daemon registers its address once it listens (the real port, after
 * `--port 0`) and removes it when it closes; host and port do not change on reload. A registry
 * rather than a tool_config key because the address is the daemon's, not the listener's, and the
 * guard is a pure function of the URL everywhere else.
 *
 * Addresses are compared as the kernel routes them: any loopback or unspecified address (127/8,
 * ::1, 0.0.0.0, ::, and each inside IPv6) reaches an API on loopback or on every interface, and
 * this host's own addresses reach one on every interface.
 */
import { lookup } from 'node:dns/promises';
import { networkInterfaces } from 'node:os';
import { asIp, canonicalAddress, classifyAddress } from './ip.ts';

export interface ApiEndpoint {
  /** The address the API listens on, as configured: 127.0.0.1, ::1, 0.0.0.0, ::, a name. */
  host: string;
  port: number;
}

/** How long this host's interface addresses are reused before being read again. */
const INTERFACES_TTL_MS = 5_000;

export class OwnApi {
  readonly #endpoints = new Map<object, ApiEndpoint>();
  #interfaces: { at: number; addresses: Set<string> } | undefined;

  /** Registers (or moves) the API of `owner` (one daemon). */
  set(owner: object, endpoint: ApiEndpoint): void {
    this.#endpoints.set(owner, { ...endpoint });
  }

  delete(owner: object): void {
    this.#endpoints.delete(owner);
  }

  /** How many daemon APIs are registered (none: nothing to refuse, no lookup needed). */
  get size(): number {
    return this.#endpoints.size;
  }

  /** The API that `address`:`port` reaches, or undefined. `address` is an IP address in any form. */
  reached(address: string, port: number): ApiEndpoint | undefined {
    let target: string | null | undefined;
    for (const endpoint of this.#endpoints.values()) {
      if (endpoint.port !== port) continue;
      // Parsed only for a URL on a daemon's port: every other one costs a comparison.
      target ??= canonicalAddress(address);
      if (target !== null && this.#reaches(endpoint.host, target)) return endpoint;
    }
    return undefined;
  }

  #reaches(host: string, target: string): boolean {
    const local = isLocal(target);
    const bound = host.toLowerCase() === 'localhost' ? '127.0.0.1' : canonicalAddress(host);
    // A name other than localhost is resolved by the server when it listens: taken as every interface.
    if (bound === null || isUnspecified(bound)) return local || this.#ownAddresses().has(target);
    // Loopback reaches a server on any loopback address (and 0.0.0.0 is loopback to connect to);
    // one bound to a single address is reached there, and loopback is refused too, to be safe.
    return local || target === bound;
  }

  #ownAddresses(): Set<string> {
    const now = Date.now();
    if (!this.#interfaces || now - this.#interfaces.at > INTERFACES_TTL_MS) {
      const addresses = new Set<string>();
      for (const list of Object.values(networkInterfaces())) {
        for (const entry of list ?? []) {
          const canonical = canonicalAddress(entry.address.split('%')[0]!);
          if (canonical !== null) addresses.add(canonical);
        }
      }
      this.#interfaces = { at: now, addresses };
    }
    return this.#interfaces.addresses;
  }
}

function isLocal(address: string): boolean {
  const rule = classifyAddress(address)?.rule;
  return rule === 'web.loopback' || rule === 'web.unspecified';
}

function isUnspecified(address: string): boolean {
  return asIp(address) !== null && classifyAddress(address)?.rule === 'web.unspecified';
}

/** The daemons of this process (normally one). */
export const ownApi = new OwnApi();

/**
 * The daemon API `url` leads to, resolving its host name (every address), or undefined. For
 * connections the web guard does not make (an MCP HTTP server's): localhost is loopback whatever
 * the resolver says, and a name that does not resolve leads nowhere.
 */
export async function ownApiAt(
  url: URL,
  resolve: (host: string) => Promise<string[]> = resolveAll,
): Promise<ApiEndpoint | undefined> {
  if (ownApi.size === 0) return undefined;
  const port = url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  const host = url.hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  if (asIp(host)) return ownApi.reached(host, port);
  if (host === 'localhost' || host.endsWith('.localhost')) return ownApi.reached('127.0.0.1', port);
  const addresses = await resolve(host).catch(() => [] as string[]);
  for (const address of addresses) {
    const endpoint = ownApi.reached(address, port);
    if (endpoint) return endpoint;
  }
  return undefined;
}

async function resolveAll(host: string): Promise<string[]> {
  return (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
}
