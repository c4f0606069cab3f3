/**
 * IP address forms and classes for the web guard. WHATWG URL parsing already turns `0x7f.1` into
 * `127.0.0.1`, but addresses also arrive from resolvers and other parsers, so the odd IPv4 forms
 * (decimal 2130706433, octal 0177.0.0.1, hex 0x7f.0.0.1, short 127.1) are parsed here too, the
 * way inet_aton reads them.
 */
import ipaddr from 'ipaddr.js';

/** inet_aton: one to four parts, each decimal, octal (leading 0) or hex (0x); the last part fills the remaining bytes. */
export function parseIPv4Loose(text: string): number | null {
  if (text.length === 0 || text.length > 64) return null;
  const parts = text.endsWith('.') ? text.slice(0, -1).split('.') : text.split('.');
  if (parts.length < 1 || parts.length > 4) return null;
  const values: number[] = [];
  for (const part of parts) {
    let v: number;
    if (/^0[xX][0-9a-fA-F]*$/.test(part)) v = part.length === 2 ? 0 : Number.parseInt(part.slice(2), 16);
    else if (/^0[0-7]+$/.test(part)) v = Number.parseInt(part, 8);
    else if (/^(0|[1-9][0-9]*)$/.test(part)) v = Number(part);
    else return null;
    if (!Number.isFinite(v)) return null;
    values.push(v);
  }
  const last = values.pop()!;
  for (const v of values) if (v > 255) return null;
  const lastBytes = 4 - values.length;
  if (last >= 2 ** (8 * lastBytes)) return null;
  let n = 0;
  for (const v of values) n = n * 256 + v;
  return n * 2 ** (8 * lastBytes) + last;
}

export function dotted(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

/** A host as an IP address in canonical form, or null when it is a name. Brackets around IPv6 are removed. */
export function asIp(host: string): { address: string; family: 4 | 6 } | null {
  const h = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (h.includes(':')) {
    const bare = h.split('%')[0]!;
    if (!ipaddr.IPv6.isValid(bare)) return null;
    return { address: ipaddr.IPv6.parse(bare).toString(), family: 6 };
  }
  const n = parseIPv4Loose(h);
  return n === null ? null : { address: dotted(n), family: 4 };
}

/**
 * `address` in canonical form, or the IPv4 address it carries when it embeds one
 * (::ffff:127.0.0.1 and ::ffff:7f00:1 are 127.0.0.1), so two spellings of one place compare equal.
 * Null when it is not an IP address.
 */
export function canonicalAddress(address: string): string | null {
  const ip = asIp(address);
  if (ip === null) return null;
  if (ip.family === 4) return ip.address;
  return embeddedIPv4(ipaddr.IPv6.parse(ip.address)) ?? ip.address;
}

export type AddressRule =
  | 'web.metadata'
  | 'web.loopback'
  | 'web.unspecified'
  | 'web.private'
  | 'web.link_local'
  | 'web.cgnat'
  | 'web.unique_local'
  | 'web.reserved';

export interface AddressClass {
  rule: AddressRule;
  /** In words, for the reason: "a private address (10.0.0.0/8, ...)". */
  what: string;
}

const METADATA = new Set([
  '169.254.169.254',
  '169.254.170.2',
  '169.254.169.123',
  '100.100.100.200',
  '168.63.129.16',
  'fd00:ec2::254',
]);

const V4: Record<string, AddressClass> = {
  loopback: { rule: 'web.loopback', what: 'a loopback address' },
  unspecified: { rule: 'web.unspecified', what: 'the unspecified address (0.0.0.0/8)' },
  private: { rule: 'web.private', what: 'a private address (10/8, 172.16/12, 192.168/16)' },
  linkLocal: { rule: 'web.link_local', what: 'a link-local address (169.254/16)' },
  carrierGradeNat: { rule: 'web.cgnat', what: 'a carrier-grade NAT address (100.64/10)' },
};
const V6: Record<string, AddressClass> = {
  loopback: { rule: 'web.loopback', what: 'the IPv6 loopback address (::1)' },
  unspecified: { rule: 'web.unspecified', what: 'the unspecified address (::)' },
  linkLocal: { rule: 'web.link_local', what: 'a link-local address (fe80::/10)' },
  uniqueLocal: { rule: 'web.unique_local', what: 'a unique-local address (fc00::/7)' },
};

/** Why an address may not be fetched, or null for a public unicast address. */
export function classifyAddress(address: string): AddressClass | null {
  const ip = asIp(address);
  if (ip === null) return { rule: 'web.reserved', what: 'not a valid IP address' };
  if (METADATA.has(ip.address)) return { rule: 'web.metadata', what: 'a cloud metadata endpoint' };
  if (ip.family === 4) {
    const range = ipaddr.IPv4.parse(ip.address).range();
    if (range === 'unicast') return null;
    return V4[range] ?? { rule: 'web.reserved', what: `a reserved address (${range})` };
  }
  const v6 = ipaddr.IPv6.parse(ip.address);
  const embedded = embeddedIPv4(v6);
  if (embedded) {
    const inner = classifyAddress(embedded);
    return inner ? { rule: inner.rule, what: `${inner.what}, embedded in IPv6 as ${ip.address}` } : null;
  }
  const range = v6.range();
  if (range === 'unicast') return null;
  return V6[range] ?? { rule: 'web.reserved', what: `a reserved address (${range})` };
}

/**
 * The IPv4 address an IPv6 address carries and that the network may route to: mapped
 * (::ffff:a.b.c.d), translated (::ffff:0:a.b.c.d), compatible (::a.b.c.d), NAT64 (64:ff9b::/96)
 * and 6to4 (2002::/16).
 */
function embeddedIPv4(v6: ipaddr.IPv6): string | null {
  const p = v6.parts;
  const low = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zeros = (from: number, to: number) => p.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && p[5] === 0xffff) return low(p[6]!, p[7]!);
  if (zeros(0, 4) && p[4] === 0xffff && p[5] === 0) return low(p[6]!, p[7]!);
  if (zeros(0, 6) && (p[6] !== 0 || p[7]! > 1)) return low(p[6]!, p[7]!);
  if (p[0] === 0x64 && p[1] === 0xff9b && zeros(2, 6)) return low(p[6]!, p[7]!);
  if (p[0] === 0x2002) return low(p[1]!, p[2]!);
  return null;
}
