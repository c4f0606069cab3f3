import { describe, expect, it } from 'vitest';
import type { ToolConfig } from '../../src/config/types.ts';
import { asIp, classifyAddress, dotted, parseIPv4Loose } from '../../src/guard/ip.ts';
import { checkUrlStatic, domainMatches, type ResolvedAddress, resolveAndCheck } from '../../src/guard/web.ts';
import { type ExpectedVerdict, loadCorpus } from './corpus-cases.ts';

interface Case extends ExpectedVerdict {
  url: string;
  tool_config: ToolConfig;
}

const cases = loadCorpus<Case>('web');

describe('web corpus (static checks)', () => {
  it.each(cases.map((c) => [`${c.url} ${JSON.stringify(c.tool_config)}`, c] as const))('%s', (_n, c) => {
    const v = checkUrlStatic(c.url, c.tool_config);
    expect({ verdict: v.verdict, rule_id: v.rule_id }).toEqual({ verdict: c.verdict, rule_id: c.rule_id });
    if (v.verdict === 'deny') expect(v.reason).toMatch(/\w/);
  });
});

describe('odd IPv4 forms', () => {
  it.each([
    ['2130706433', '127.0.0.1'],
    ['0177.0.0.1', '127.0.0.1'],
    ['0x7f.0.0.1', '127.0.0.1'],
    ['0x7F.0x0.0x0.0x1', '127.0.0.1'],
    ['127.1', '127.0.0.1'],
    ['0x7f.1', '127.0.0.1'],
    ['127.0.1', '127.0.0.1'],
    ['017700000001', '127.0.0.1'],
    ['0x7f000001', '127.0.0.1'],
    ['192.168.257', '192.168.1.1'],
    ['0', '0.0.0.0'],
    ['10.0.0.1.', '10.0.0.1'],
  ])('parses %s as %s, as inet_aton does', (text, expected) => {
    const n = parseIPv4Loose(text);
    expect(n).not.toBeNull();
    expect(dotted(n!)).toBe(expected);
  });

  it.each([
    '256.0.0.1',
    '1.2.3.4.5',
    '0x1g.0.0.1',
    '08.0.0.1',
    '4294967296',
    'example.com',
    '1.2.3.256',
    '',
    '1..2',
  ])('refuses %s', (text) => {
    expect(parseIPv4Loose(text)).toBeNull();
  });

  it('agrees with WHATWG URL, which normalises these hosts before the guard sees them', () => {
    for (const host of ['2130706433', '0177.0.0.1', '0x7f.0.0.1', '127.1', '0x7f.1']) {
      expect(new URL(`http://${host}/`).hostname).toBe('127.0.0.1');
      expect(asIp(host)).toEqual({ address: '127.0.0.1', family: 4 });
    }
  });

  it('classifies IPv6 forms that carry an IPv4 address by that address', () => {
    expect(classifyAddress('::ffff:127.0.0.1')?.rule).toBe('web.loopback');
    expect(classifyAddress('::ffff:0:10.0.0.1')?.rule).toBe('web.private');
    expect(classifyAddress('::192.168.0.1')?.rule).toBe('web.private');
    expect(classifyAddress('64:ff9b::a9fe:a9fe')?.rule).toBe('web.metadata');
    expect(classifyAddress('2002:c0a8:101::1')?.rule).toBe('web.private');
    expect(classifyAddress('::ffff:8.8.8.8')).toBeNull();
  });
});

describe('domainMatches', () => {
  it('matches exact names and *.x subdomains only', () => {
    expect(domainMatches('a.x.com', '*.x.com')).toBe(true);
    expect(domainMatches('x.com', '*.x.com')).toBe(false);
    expect(domainMatches('ax.com', '*.x.com')).toBe(false);
    expect(domainMatches('X.COM.', 'x.com')).toBe(true);
    expect(domainMatches('a.x.com', 'x.com')).toBe(false);
    expect(domainMatches('a.x.com', 'a.*.com')).toBe(false);
  });
});

describe('resolveAndCheck', () => {
  const lookupOf = (answers: Record<string, ResolvedAddress[]>) => {
    const calls: string[] = [];
    const lookup = async (host: string) => {
      calls.push(host);
      const a = answers[host];
      if (!a) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      return a;
    };
    return { lookup, calls };
  };

  it('returns every checked address for a public host, to connect to addresses[0]', async () => {
    const { lookup, calls } = lookupOf({
      'example.com': [
        { address: '93.184.215.14', family: 4 },
        { address: '2606:2800:21f::1', family: 6 },
      ],
    });
    const t = await resolveAndCheck('https://example.com/a?b=c', {}, { lookup });
    expect(calls).toEqual(['example.com']);
    expect(t.verdict.verdict).toBe('allow');
    expect(t.url.href).toBe('https://example.com/a?b=c');
    expect(t.addresses).toEqual([
      { address: '93.184.215.14', family: 4 },
      { address: '2606:2800:21f::1', family: 6 },
    ]);
  });

  it('denies a public-looking name that resolves to a private address (DNS rebinding)', async () => {
    const { lookup } = lookupOf({ 'rebind.example.com': [{ address: '10.0.0.7', family: 4 }] });
    const t = await resolveAndCheck('https://rebind.example.com/', {}, { lookup });
    expect(t.verdict).toMatchObject({ verdict: 'deny', rule_id: 'web.private', segment: '10.0.0.7' });
    expect(t.verdict.reason).toContain('rebind.example.com resolves to 10.0.0.7');
    expect(t.addresses).toEqual([]);
  });

  it('denies when any one of several addresses is private, whatever the order', async () => {
    const mixed = [
      { address: '93.184.215.14', family: 4 as const },
      { address: '169.254.169.254', family: 4 as const },
    ];
    for (const answers of [mixed, [...mixed].reverse()]) {
      const { lookup } = lookupOf({ 'mixed.example.com': answers });
      const t = await resolveAndCheck('http://mixed.example.com/', {}, { lookup });
      expect(t.verdict).toMatchObject({ verdict: 'deny', rule_id: 'web.metadata' });
      expect(t.addresses).toEqual([]);
    }
  });

  it('checks resolved IPv6 and mapped answers too', async () => {
    const { lookup: l2 } = lookupOf({
      'v6.example.com': [{ address: 'fd00::5', family: 6 }],
      'm.example.com': [{ address: '::ffff:127.0.0.1', family: 6 }],
    });
    expect((await resolveAndCheck('http://v6.example.com/', {}, { lookup: l2 })).verdict.rule_id).toBe(
      'web.unique_local',
    );
    expect((await resolveAndCheck('http://m.example.com/', {}, { lookup: l2 })).verdict.rule_id).toBe(
      'web.loopback',
    );
  });

  it('allows a loopback answer only with allow_loopback', async () => {
    const { lookup } = lookupOf({ 'dev.example.com': [{ address: '127.0.0.1', family: 4 }] });
    expect((await resolveAndCheck('http://dev.example.com:4000/', {}, { lookup })).verdict.rule_id).toBe(
      'web.loopback',
    );
    const ok = await resolveAndCheck('http://dev.example.com:4000/', { allow_loopback: true }, { lookup });
    expect(ok.verdict.verdict).toBe('allow');
    expect(ok.addresses).toEqual([{ address: '127.0.0.1', family: 4 }]);
  });

  it('does not resolve a host the static check already refuses', async () => {
    const { lookup, calls } = lookupOf({});
    const t = await resolveAndCheck('http://169.254.169.254/latest', {}, { lookup });
    expect(t.verdict.rule_id).toBe('web.metadata');
    expect(calls).toEqual([]);
    const bad = await resolveAndCheck('::not a url', {}, { lookup });
    expect(bad.verdict.rule_id).toBe('web.invalid_url');
  });

  it('does not resolve IP literals: the literal is the address', async () => {
    const { lookup, calls } = lookupOf({});
    const t = await resolveAndCheck('http://127.0.0.1:5000/', { allow_loopback: true }, { lookup });
    expect(calls).toEqual([]);
    expect(t.addresses).toEqual([{ address: '127.0.0.1', family: 4 }]);
    const six = await resolveAndCheck('http://[2606:4700:4700::1111]/', {}, { lookup });
    expect(six.addresses).toEqual([{ address: '2606:4700:4700::1111', family: 6 }]);
  });

  it('passes a lookup failure on to the caller, and denies an empty answer', async () => {
    const { lookup } = lookupOf({ 'empty.example.com': [] });
    await expect(resolveAndCheck('http://nowhere.example.com/', {}, { lookup })).rejects.toThrow(/ENOTFOUND/);
    expect((await resolveAndCheck('http://empty.example.com/', {}, { lookup })).verdict.rule_id).toBe(
      'web.no_address',
    );
  });

  it('uses the system resolver by default (localhost resolves to loopback)', async () => {
    const t = await resolveAndCheck('http://localhost:45678/', { allow_loopback: true });
    expect(t.verdict.verdict).toBe('allow');
    expect(t.addresses.length).toBeGreaterThan(0);
    for (const a of t.addresses) expect(classifyAddress(a.address)?.rule).toBe('web.loopback');
  });
});
