/**
 * The web guard: judges a URL before fetch_url / webhook connect. `checkUrlStatic` looks only at
 * the URL (scheme, credentials, host literal, domain lists, port); `resolveAndCheck` also resolves
 * the host and checks every address, and the caller then connects to `addresses[0]`: the address
 * that was checked is the address used, so a DNS answer that changes between check and connect
 * (rebinding) cannot slip a private address in. Callers run it again for every redirect hop.
 *
 * tool_config keys read here: allowed_domains, blocked_domains (exact host, or `*.x` for the
 * subdomains of x, not x itself), allow_loopback (true lets 127/8, ::1 and localhost through, for
 * local services and tests), allowed_ports (ports otherwise refused as risky).
 *
 * The daemon's own API (own-api.ts) is refused under every address that reaches it, whatever
 * allow_loopback says: `web.own_api`.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import type { ToolConfig } from '../config/types.ts';
import { type AddressClass, asIp, classifyAddress } from './ip.ts';
import { ownApi } from './own-api.ts';
import { allow, deny, type Verdict } from './types.ts';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

export interface CheckedTarget {
  verdict: Verdict;
  url: URL;
  /** Every address the host resolved to (all checked); connect to addresses[0]. Empty when denied. */
  addresses: ResolvedAddress[];
}

export type Lookup = (host: string) => Promise<ResolvedAddress[]>;

/** Longest URL judged; longer ones are denied. */
export const MAX_URL_LENGTH = 8192;

/**
 * Ports of services that speak something other than HTTP and that SSRF is used to reach: SSH,
 * mail, databases, caches, search engines, container and cluster APIs.
 */
export const RISKY_PORTS: ReadonlySet<number> = new Set([
  19, 21, 22, 23, 25, 110, 111, 135, 137, 138, 139, 143, 389, 445, 465, 512, 513, 514, 587, 636, 873, 993,
  995, 1080, 1433, 1521, 2049, 2375, 2376, 2379, 2380, 3306, 3389, 4369, 5432, 5900, 5984, 6379, 6443, 6666,
  7001, 8500, 9042, 9092, 9200, 9300, 10250, 10255, 11211, 15672, 27017, 27018, 28017,
]);

const LOOPBACK_NAMES = /^(localhost|localhost\.localdomain|ip6-localhost|ip6-loopback)$|\.localhost$/;
const METADATA_NAMES =
  /^(metadata\.google\.internal|metadata\.goog|metadata|instance-data|instance-data\.ec2\.internal|metadata\.azure\.com|metadata\.packet\.net)$/;
const LOCAL_NAMES = /\.local$/;
const INTERNAL_NAMES = /\.(internal|intranet|corp|lan|localdomain|home\.arpa|home|private)$/;

const placeholder = () => new URL('invalid:');

interface Parsed {
  url: URL;
  /** Lower-case host without brackets or trailing dot. */
  host: string;
  ip: ResolvedAddress | null;
}

/** Everything that can be judged without DNS. */
export function checkUrlStatic(url: string, toolConfig: ToolConfig): Verdict {
  return staticCheck(url, toolConfig).verdict;
}

function staticCheck(raw: string, config: ToolConfig): { verdict: Verdict; parsed?: Parsed } {
  if (typeof raw !== 'string' || raw.trim() === '') {
    return { verdict: deny('web.invalid_url', 'The URL is empty.', 'Give an absolute http(s) URL.') };
  }
  if (raw.length > MAX_URL_LENGTH) {
    return {
      verdict: deny(
        'web.invalid_url',
        `The URL is longer than ${MAX_URL_LENGTH} characters.`,
        'Shorten the URL.',
      ),
    };
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return {
      verdict: deny(
        'web.invalid_url',
        'The URL cannot be parsed.',
        'Give an absolute URL such as https://example.com/page.',
      ),
    };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return {
      verdict: deny(
        'web.scheme',
        `Only http and https URLs may be fetched, not ${url.protocol}.`,
        'Use an https:// URL.',
        url.protocol,
      ),
    };
  }
  if (url.username !== '' || url.password !== '') {
    return {
      verdict: deny(
        'web.credentials',
        'The URL carries a user name or password.',
        'Remove credentials from the URL; configured secrets are added by the tool, never written in URLs.',
        url.hostname,
      ),
    };
  }
  let host = url.hostname.toLowerCase();
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (host.endsWith('.')) host = host.slice(0, -1);
  if (host === '')
    return {
      verdict: deny('web.invalid_url', 'The URL has no host.', 'Give an absolute http(s) URL with a host.'),
    };
  const ip = asIp(host);
  const segment = ip?.address ?? host;

  const blocked = domainList(config.blocked_domains);
  if (blocked.some((p) => domainMatches(host, p) || (ip !== null && domainMatches(ip.address, p)))) {
    return {
      verdict: deny(
        'web.blocked_domain',
        `${host} is in this tool's blocked_domains.`,
        'Use a different source.',
        segment,
      ),
    };
  }

  const loopbackOk = config.allow_loopback === true;
  const port = portOf(url);
  if (ip) {
    const cls = classifyAddress(ip.address);
    if (cls && !(cls.rule === 'web.loopback' && loopbackOk))
      return { verdict: addressDenial(cls, host, ip.address) };
    const own = ownApiDenial(host, ip.address, port);
    if (own) return { verdict: own };
  } else {
    const named = nameClass(host);
    if (named && !(named.rule_id === 'web.loopback' && loopbackOk)) return { verdict: named };
    // localhost and *.localhost are loopback whatever a resolver says.
    const own = named?.rule_id === 'web.loopback' ? ownApiDenial(host, '127.0.0.1', port) : null;
    if (own) return { verdict: own };
  }

  const allowed = config.allowed_domains === undefined ? null : domainList(config.allowed_domains);
  if (
    allowed !== null &&
    !allowed.some((p) => domainMatches(host, p) || (ip !== null && domainMatches(ip.address, p)))
  ) {
    return {
      verdict: deny(
        'web.domain_not_allowed',
        `${host} is not in this tool's allowed_domains.`,
        allowed.length > 0
          ? `Use a URL on one of: ${allowed.slice(0, 10).join(', ')}.`
          : 'No domains are allowed for this tool.',
        segment,
      ),
    };
  }

  if (url.port !== '') {
    const port = Number(url.port);
    const extra = Array.isArray(config.allowed_ports) ? config.allowed_ports : [];
    if (RISKY_PORTS.has(port) && !extra.includes(port)) {
      return {
        verdict: deny(
          'web.risky_port',
          `Port ${port} belongs to a non-web service (SSH, mail, a database, a cache, a cluster API...).`,
          'Use the service’s HTTP(S) endpoint, or list the port in allowed_ports.',
          `${segment}:${port}`,
        ),
      };
    }
  }
  const verdict = allow();
  verdict.segment = segment;
  return { verdict, parsed: { url, host, ip } };
}

/** Judges the URL, resolves its host and judges every address. Lookup failures reject, as the resolver does. */
export async function resolveAndCheck(
  url: string,
  toolConfig: ToolConfig,
  options: { lookup?: Lookup } = {},
): Promise<CheckedTarget> {
  const { verdict, parsed } = staticCheck(url, toolConfig);
  if (verdict.verdict === 'deny' || !parsed) {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      u = placeholder();
    }
    return { verdict, url: u, addresses: [] };
  }
  if (parsed.ip) return { verdict, url: parsed.url, addresses: [parsed.ip] };

  const lookup = options.lookup ?? defaultLookup;
  const answers = await lookup(parsed.host);
  if (!Array.isArray(answers) || answers.length === 0) {
    return {
      verdict: deny(
        'web.no_address',
        `${parsed.host} resolved to no address.`,
        'Check the host name.',
        parsed.host,
      ),
      url: parsed.url,
      addresses: [],
    };
  }
  const loopbackOk = toolConfig.allow_loopback === true;
  const addresses: ResolvedAddress[] = [];
  for (const answer of answers) {
    const ip = asIp(String(answer?.address ?? ''));
    const cls = ip
      ? classifyAddress(ip.address)
      : { rule: 'web.reserved' as const, what: 'not a valid IP address' };
    if (cls && !(cls.rule === 'web.loopback' && loopbackOk)) {
      return {
        verdict: addressDenial(cls, parsed.host, ip?.address ?? String(answer?.address)),
        url: parsed.url,
        addresses: [],
      };
    }
    const own = ownApiDenial(parsed.host, ip!.address, portOf(parsed.url));
    if (own) return { verdict: own, url: parsed.url, addresses: [] };
    addresses.push(ip!);
  }
  return { verdict, url: parsed.url, addresses };
}

async function defaultLookup(host: string): Promise<ResolvedAddress[]> {
  const answers = await dnsLookup(host, { all: true, verbatim: true });
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
}

function addressDenial(cls: AddressClass, host: string, address: string): Verdict {
  const via =
    host === address || asIp(host)?.address === address ? `${host} is` : `${host} resolves to ${address},`;
  const suggestion =
    cls.rule === 'web.loopback'
      ? 'Fetch public URLs only; loopback needs allow_loopback: true in this tool’s tool_config.'
      : 'Fetch public URLs only; internal and cloud-metadata addresses are never fetched.';
  return deny(cls.rule, `${via} ${cls.what}.`, suggestion, address);
}

/** The port a URL connects to: its own, or its scheme's. */
function portOf(url: URL): number {
  if (url.port !== '') return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}

/** `web.own_api` when `address`:`port` reaches this daemon's API, else null. */
function ownApiDenial(host: string, address: string, port: number): Verdict | null {
  const endpoint = ownApi.reached(address, port);
  if (!endpoint) return null;
  const via = host === address || asIp(host)?.address === address ? host : `${host} (${address})`;
  return deny(
    'web.own_api',
    `${via} port ${port} is this organism's own API, which no tool may call (it would act as a person: approve, inject, reload).`,
    'Tools reach the organism through messages and granted tools, never its API; allow_loopback does not open it.',
    `${address}:${port}`,
  );
}

/** Host names that lead to local or internal services whatever DNS says. */
function nameClass(host: string): Verdict | null {
  const suggestion = 'Fetch public URLs only.';
  if (METADATA_NAMES.test(host))
    return deny('web.metadata', `${host} is a cloud metadata endpoint.`, suggestion, host);
  if (LOOPBACK_NAMES.test(host)) {
    return deny(
      'web.loopback',
      `${host} is a loopback name.`,
      'Fetch public URLs only; loopback needs allow_loopback: true in this tool’s tool_config.',
      host,
    );
  }
  if (LOCAL_NAMES.test(host))
    return deny(
      'web.local_domain',
      `${host} is a .local (mDNS) name on the local network.`,
      suggestion,
      host,
    );
  if (INTERNAL_NAMES.test(host))
    return deny('web.internal_domain', `${host} is an internal network name.`, suggestion, host);
  if (!host.includes('.') && !host.includes(':')) {
    return deny(
      'web.internal_domain',
      `${host} is a single-label name, resolved through local search domains.`,
      'Use a fully qualified public host name.',
      host,
    );
  }
  return null;
}

function domainList(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return value
    .filter((v): v is string => typeof v === 'string' && v !== '')
    .map((v) => v.toLowerCase().replace(/\.$/, ''));
}

/** `x.com` matches only x.com; `*.x.com` matches a.x.com and a.b.x.com, not x.com. Other wildcards never match. */
export function domainMatches(host: string, pattern: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  const p = pattern.toLowerCase().replace(/\.$/, '');
  if (p.startsWith('*.')) {
    const suffix = p.slice(1);
    return !suffix.includes('*') && h.endsWith(suffix) && h.length > suffix.length;
  }
  return !p.includes('*') && h === p;
}
