import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AuthError, ServerError } from '../../src/errors.ts';
import {
  Authenticator,
  assertSafeBind,
  hasRole,
  isLoopbackHost,
  localCredential,
  requireRole,
} from '../../src/server/auth.ts';
import { RateLimiter } from '../../src/server/rate-limit.ts';
import { crossSiteRefusal } from '../../src/server/security.ts';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

describe('Authenticator', () => {
  const auth = Authenticator.fromConfig(
    {
      tokens: [
        { name: 'ci', role: 'operator', token_env: 'CI_TOKEN' },
        { name: 'boss', role: 'admin', sha256: sha('boss-token-0000000000') },
        { name: 'eyes', role: 'viewer', token_env: 'EYES_TOKEN' },
      ],
    },
    { CI_TOKEN: 'ci-token-1111111111', EYES_TOKEN: 'eyes-token-2222222222' },
  );

  it('knows each token by its env var or its hash, and names the holder', () => {
    expect(auth.enabled).toBe(true);
    expect(auth.authenticate('Bearer ci-token-1111111111')).toEqual({ name: 'ci', role: 'operator' });
    expect(auth.authenticate('bearer   boss-token-0000000000 ')).toEqual({ name: 'boss', role: 'admin' });
    expect(auth.authenticate('Bearer eyes-token-2222222222')).toEqual({ name: 'eyes', role: 'viewer' });
    expect(auth.describe()).toEqual([
      { name: 'ci', role: 'operator' },
      { name: 'boss', role: 'admin' },
      { name: 'eyes', role: 'viewer' },
    ]);
  });

  it('refuses a missing, malformed or unknown token without echoing it', () => {
    const attempt = (header: string | undefined) => {
      try {
        auth.authenticate(header);
      } catch (error) {
        return error as AuthError;
      }
      throw new Error('accepted');
    };
    expect(attempt(undefined).code).toBe('auth.required');
    expect(attempt('Basic ci-token-1111111111').code).toBe('auth.required');
    expect(attempt('Bearer ci-token-1111111112').code).toBe('auth.invalid');
    expect(attempt('Bearer ci-token-1111111112').message).not.toContain('ci-token');
    expect(attempt('Bearer ').code).toBe('auth.required');
  });

  it('with no tokens configured takes the local token only, as local (admin); with none at all, nothing', () => {
    const local = 'f'.repeat(64);
    const onlyLocal = Authenticator.fromConfig({ tokens: [] }, {}, localCredential(local));
    expect(onlyLocal.enabled).toBe(false);
    expect(onlyLocal.describe()).toEqual([]);
    expect(onlyLocal.authenticate(`Bearer ${local}`)).toEqual({ name: 'local', role: 'admin' });
    expect(() => onlyLocal.authenticate(undefined)).toThrow(/needs `Authorization: Bearer <token>`/);
    expect(() => onlyLocal.authenticate(`Bearer ${'e'.repeat(64)}`)).toThrow(/not valid/);
    // No credential at all is not an open API: every caller is refused.
    const none = Authenticator.fromConfig({ tokens: [] }, {});
    expect(() => none.authenticate(undefined)).toThrow(AuthError);
    expect(() => none.authenticate('Bearer anything-at-all-0000')).toThrow(AuthError);
  });

  it('takes the local token beside configured ones (describe() lists the configured only), and keeps it for a reload', () => {
    const local = '0'.repeat(64);
    const both = Authenticator.fromConfig(
      { tokens: [{ name: 'ci', role: 'viewer', token_env: 'CI_TOKEN' }] },
      { CI_TOKEN: 'ci-token-1111111111' },
      localCredential(local),
    );
    expect(both.authenticate(`Bearer ${local}`)).toEqual({ name: 'local', role: 'admin' });
    expect(both.authenticate('Bearer ci-token-1111111111')).toEqual({ name: 'ci', role: 'viewer' });
    expect(both.describe()).toEqual([{ name: 'ci', role: 'viewer' }]);
    const reloaded = Authenticator.fromConfig({ tokens: [] }, {}, both.local);
    expect(reloaded.authenticate(`Bearer ${local}`)).toEqual({ name: 'local', role: 'admin' });
  });

  it('refuses a configured token named local: that name is the local token', () => {
    expect(() =>
      Authenticator.fromConfig({ tokens: [{ name: 'local', role: 'viewer', sha256: sha('x') }] }, {}),
    ).toThrow(/auth token 'local': the name is the daemon's local token's; choose another/);
  });

  it('refuses to start with an unset or short token variable, naming the variable only', () => {
    const attempt = () =>
      Authenticator.fromConfig(
        {
          tokens: [
            { name: 'a', role: 'admin', token_env: 'UNSET_TOKEN' },
            { name: 'b', role: 'viewer', token_env: 'SHORT_TOKEN' },
          ],
        },
        { SHORT_TOKEN: 'tiny-secret' },
      );
    expect(attempt).toThrow(ServerError);
    expect(attempt).toThrow(/UNSET_TOKEN is not set.*SHORT_TOKEN is shorter than 16/);
    expect(attempt).not.toThrow(/tiny-secret/);
  });
});

describe('roles', () => {
  it('are ordered viewer < operator < admin', () => {
    expect(hasRole({ name: 'x', role: 'admin' }, 'operator')).toBe(true);
    expect(hasRole({ name: 'x', role: 'operator' }, 'operator')).toBe(true);
    expect(hasRole({ name: 'x', role: 'viewer' }, 'operator')).toBe(false);
    expect(() => requireRole({ name: 'eyes', role: 'viewer' }, 'admin', 'killing a thread')).toThrow(
      "killing a thread needs the admin role; token 'eyes' is viewer",
    );
  });
});

describe('binding', () => {
  it('treats only loopback addresses as local', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]', '::ffff:127.0.0.1'])
      expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ['0.0.0.0', '::', '10.0.0.1', '192.168.1.2', 'example.com', '128.0.0.1'])
      expect(isLoopbackHost(host), host).toBe(false);
  });

  it('refuses a non-loopback address without tokens', () => {
    const open = Authenticator.fromConfig({ tokens: [] }, {});
    expect(() => assertSafeBind('0.0.0.0', open)).toThrow(
      /refusing to listen on 0\.0\.0\.0 without authentication/,
    );
    expect(() => assertSafeBind('127.0.0.1', open)).not.toThrow();
    const closed = Authenticator.fromConfig({ tokens: [{ name: 'a', role: 'admin', sha256: sha('x') }] }, {});
    expect(() => assertSafeBind('0.0.0.0', closed)).not.toThrow();
  });
});

describe('RateLimiter', () => {
  it('allows a burst, then perSecond, per caller, and says when to retry', () => {
    let now = 0;
    const limiter = new RateLimiter({ perSecond: 2, burst: 3, now: () => now });
    expect([1, 2, 3].map(() => limiter.take('a').ok)).toEqual([true, true, true]);
    const refused = limiter.take('a');
    expect(refused).toEqual({ ok: false, retryAfterSeconds: 0.5 });
    expect(limiter.take('b').ok).toBe(true); // another caller has its own bucket
    now += 500;
    expect(limiter.take('a').ok).toBe(true);
    expect(limiter.take('a').ok).toBe(false);
    now += 60_000;
    expect([1, 2, 3, 4].map(() => limiter.take('a').ok)).toEqual([true, true, true, false]);
  });

  it('is off at 0 per second and bounds the callers it remembers', () => {
    const off = new RateLimiter({ perSecond: 0, burst: 1 });
    expect(Array.from({ length: 100 }, () => off.take('a').ok).every(Boolean)).toBe(true);
    const small = new RateLimiter({ perSecond: 1, burst: 1, maxKeys: 2, now: () => 0 });
    small.take('a');
    small.take('b');
    small.take('c'); // forgets 'a'
    expect(small.take('a').ok).toBe(true);
    expect(small.take('c').ok).toBe(false);
  });
});

describe('crossSiteRefusal', () => {
  it('lets command-line clients and same-origin pages through', () => {
    expect(crossSiteRefusal({ host: '127.0.0.1:7777' }, true)).toBeUndefined();
    expect(
      crossSiteRefusal({ host: '127.0.0.1:7777', origin: 'http://127.0.0.1:7777' }, true),
    ).toBeUndefined();
    expect(crossSiteRefusal({ host: 'localhost:7777', fetchSite: 'same-origin' }, true)).toBeUndefined();
  });

  it('refuses other origins, opaque origins, cross-site fetches and rebound host names', () => {
    expect(crossSiteRefusal({ host: '127.0.0.1:7777', origin: 'http://evil.example' }, true)).toMatch(
      /origins/,
    );
    expect(crossSiteRefusal({ host: '127.0.0.1:7777', origin: 'null' }, true)).toMatch(/opaque/);
    expect(crossSiteRefusal({ host: '127.0.0.1:7777', fetchSite: 'cross-site' }, true)).toMatch(
      /other sites/,
    );
    expect(crossSiteRefusal({ host: 'evil.example:7777' }, true)).toMatch(
      /does not answer for host 'evil.example'/,
    );
    // Off loopback the Host may be any name (tokens protect the API there).
    expect(crossSiteRefusal({ host: 'organism.internal:7777' }, false)).toBeUndefined();
  });
});
