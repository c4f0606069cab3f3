/**
 * The web guard refuses the daemon's own API (web.own_api) under every spelling of its address,
 * whatever allow_loopback says, and nothing else: another port on loopback stays a loopback
 * service. The registry itself (OwnApi) as the daemon fills it, for each kind of listen address.
 */
import { networkInterfaces } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { OwnApi, ownApi, ownApiAt } from '../../src/guard/own-api.ts';
import { checkUrlStatic, type ResolvedAddress, resolveAndCheck } from '../../src/guard/web.ts';

const PORT = 47_777;
const owner = {};
afterEach(() => ownApi.delete(owner));

const loopbackOk = { allow_loopback: true };

describe('with the daemon on 127.0.0.1', () => {
  const spellings = [
    `http://127.0.0.1:${PORT}/api/v1/inject`,
    `http://127.0.0.1.:${PORT}/`,
    `http://127.0.0.2:${PORT}/`,
    `http://127.255.255.254:${PORT}/`,
    `http://localhost:${PORT}/`,
    `http://LOCALHOST.:${PORT}/`,
    `http://api.localhost:${PORT}/`,
    `http://[::1]:${PORT}/`,
    `http://[0:0:0:0:0:0:0:1]:${PORT}/`,
    `http://[::ffff:127.0.0.1]:${PORT}/`,
    `http://[::ffff:7f00:1]:${PORT}/`,
    `http://[::127.0.0.1]:${PORT}/`,
    `http://2130706433:${PORT}/`,
    `http://0x7f000001:${PORT}/`,
    `http://0x7f.1:${PORT}/`,
    `http://0177.0.0.1:${PORT}/`,
    `http://017700000001:${PORT}/`,
    `http://127.1:${PORT}/`,
    `http://127.0.1:${PORT}/`,
    `https://127.0.0.1:${PORT}/`,
  ];

  it.each(spellings)('%s is web.own_api with allow_loopback', (url) => {
    ownApi.set(owner, { host: '127.0.0.1', port: PORT });
    const verdict = checkUrlStatic(url, loopbackOk);
    expect(verdict.verdict).toBe('deny');
    expect(verdict.rule_id).toBe('web.own_api');
    expect(verdict.reason).toContain("this organism's own API");
  });

  it('0.0.0.0 and :: stay refused as unspecified (they reach loopback too)', () => {
    ownApi.set(owner, { host: '127.0.0.1', port: PORT });
    for (const url of [`http://0.0.0.0:${PORT}/`, `http://[::]:${PORT}/`, `http://0:${PORT}/`]) {
      expect(checkUrlStatic(url, loopbackOk)).toMatchObject({ verdict: 'deny', rule_id: 'web.unspecified' });
    }
  });

  it('without allow_loopback the answer is still web.loopback', () => {
    ownApi.set(owner, { host: '127.0.0.1', port: PORT });
    expect(checkUrlStatic(`http://127.0.0.1:${PORT}/`, {}).rule_id).toBe('web.loopback');
  });

  it('another port on loopback, and a public host on that port, stay allowed', () => {
    ownApi.set(owner, { host: '127.0.0.1', port: PORT });
    expect(checkUrlStatic(`http://127.0.0.1:${PORT + 1}/`, loopbackOk).verdict).toBe('allow');
    expect(checkUrlStatic('http://localhost/', loopbackOk).verdict).toBe('allow');
    expect(checkUrlStatic(`http://93.184.216.34:${PORT}/`, loopbackOk).verdict).toBe('allow');
  });

  it('the default port of the scheme counts: a daemon on port 80 is http://localhost/', () => {
    ownApi.set(owner, { host: '127.0.0.1', port: 80 });
    expect(checkUrlStatic('http://localhost/', loopbackOk).rule_id).toBe('web.own_api');
    expect(checkUrlStatic('https://localhost/', loopbackOk).verdict).toBe('allow');
  });

  it('a name that resolves to loopback is refused at resolution (each address is checked)', async () => {
    ownApi.set(owner, { host: '127.0.0.1', port: PORT });
    const lookup = async (): Promise<ResolvedAddress[]> => [
      { address: '93.184.216.34', family: 4 },
      { address: '::ffff:127.0.0.1', family: 6 },
    ];
    const checked = await resolveAndCheck(`http://rebind.example:${PORT}/api/v1/inject`, loopbackOk, {
      lookup,
    });
    expect(checked.verdict).toMatchObject({ verdict: 'deny', rule_id: 'web.own_api' });
    expect(checked.addresses).toEqual([]);
  });

  it('once the daemon has closed, its address is an ordinary loopback service again', () => {
    ownApi.set(owner, { host: '127.0.0.1', port: PORT });
    ownApi.delete(owner);
    expect(checkUrlStatic(`http://127.0.0.1:${PORT}/`, loopbackOk).verdict).toBe('allow');
  });
});

describe('the registry, by listen address', () => {
  const interfaceAddress = Object.values(networkInterfaces())
    .flat()
    .find((a) => a && !a.internal && a.family === 'IPv4')?.address;

  it('a daemon on every interface is reached at loopback and at each of this host own addresses', () => {
    const api = new OwnApi();
    api.set(owner, { host: '0.0.0.0', port: PORT });
    expect(api.reached('127.0.0.1', PORT)).toBeDefined();
    expect(api.reached('::1', PORT)).toBeDefined();
    expect(api.reached('93.184.216.34', PORT)).toBeUndefined();
    if (interfaceAddress) {
      expect(api.reached(interfaceAddress, PORT)).toBeDefined();
      expect(api.reached(`::ffff:${interfaceAddress}`, PORT)).toBeDefined();
      expect(api.reached(interfaceAddress, PORT + 1)).toBeUndefined();
    }
    const v6 = new OwnApi();
    v6.set(owner, { host: '::', port: PORT });
    expect(v6.reached('127.0.0.1', PORT)).toBeDefined();
    if (interfaceAddress) expect(v6.reached(interfaceAddress, PORT)).toBeDefined();
  });

  it('a daemon on one address is reached there (and loopback is refused, to be safe)', () => {
    const api = new OwnApi();
    api.set(owner, { host: '192.0.2.10', port: PORT });
    expect(api.reached('192.0.2.10', PORT)).toBeDefined();
    expect(api.reached('::ffff:c000:20a', PORT)).toBeDefined();
    expect(api.reached('127.0.0.1', PORT)).toBeDefined();
    expect(api.reached('192.0.2.11', PORT)).toBeUndefined();
  });

  it('a daemon on ::1 or localhost is reached at every loopback spelling, IPv4 included', () => {
    for (const host of ['::1', 'localhost', '127.0.0.1']) {
      const api = new OwnApi();
      api.set(owner, { host, port: PORT });
      for (const address of ['127.0.0.1', '127.9.9.9', '::1', '::ffff:127.0.0.1', '0.0.0.0'])
        expect(api.reached(address, PORT), `${host} ${address}`).toBeDefined();
      if (interfaceAddress) expect(api.reached(interfaceAddress, PORT), host).toBeUndefined();
    }
  });
});

describe('ownApiAt (MCP HTTP servers: URLs the web guard does not see)', () => {
  it('finds the daemon behind an address, localhost, or a name that resolves to it', async () => {
    ownApi.set(owner, { host: '127.0.0.1', port: PORT });
    expect(await ownApiAt(new URL(`http://127.0.0.1:${PORT}/mcp`))).toBeDefined();
    expect(await ownApiAt(new URL(`http://[::ffff:7f00:1]:${PORT}/mcp`))).toBeDefined();
    expect(await ownApiAt(new URL(`http://localhost.:${PORT}/mcp`))).toBeDefined();
    const resolve = async () => ['10.0.0.1', '127.0.0.1'];
    expect(await ownApiAt(new URL(`http://mcp.example:${PORT}/mcp`), resolve)).toBeDefined();
    expect(await ownApiAt(new URL(`http://mcp.example:${PORT + 1}/mcp`), resolve)).toBeUndefined();
    expect(
      await ownApiAt(new URL(`http://mcp.example:${PORT}/mcp`), async () => ['10.0.0.1']),
    ).toBeUndefined();
    // A name that does not resolve leads nowhere (the connection fails on its own).
    const fails = async () => {
      throw new Error('ENOTFOUND');
    };
    expect(await ownApiAt(new URL(`http://nowhere.example:${PORT}/mcp`), fails)).toBeUndefined();
  });
});
