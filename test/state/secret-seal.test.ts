/**
 * Secret records of the runtime state (an MCP server's OAuth tokens): sealed like every record and
 * encrypted too, so a reader of the store (a Redis client) sees no value; a record changed, moved
 * to another key or sealed under another key is refused like any forged record.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseAuditKeys } from '../../src/audit/key.ts';
import { StateSeal } from '../../src/state/index.ts';

const seal = (hex = randomBytes(32).toString('hex')) => new StateSeal(() => parseAuditKeys(hex, 'test'));

describe('StateSeal secret records', () => {
  const value = { tokens: { access_token: 'at-0123456789abcdef', refresh_token: 'rt-fedcba9876543210' } };

  it('stores ciphertext that opens back to the value at its own place', () => {
    const s = seal();
    const record = s.sealSecret('mcp-oauth/remote', value);
    expect(record.x).toBe(1);
    expect(JSON.stringify(record)).not.toContain('at-0123456789abcdef');
    expect(JSON.stringify(record)).not.toContain('rt-fedcba9876543210');
    expect(s.open('mcp-oauth/remote', record)).toEqual({ ok: true, value });
    // Two seals of one value differ (a fresh IV each time).
    expect(s.sealSecret('mcp-oauth/remote', value).body).not.toBe(record.body);
  });

  it('refuses one moved to another key, changed, or sealed with another key', () => {
    const s = seal();
    const record = s.sealSecret('mcp-oauth/remote', value);
    expect(s.open('mcp-oauth/other', record)).toMatchObject({ ok: false });
    // One bit of the ciphertext flipped in its bytes: an edit of the base64 text could land on a
    // padding bit, or (as this test once did) swap a character for itself, and change nothing.
    const [iv, tag, text = ''] = record.body.split('.');
    const bytes = Buffer.from(text, 'base64url');
    bytes[0] = (bytes[0] ?? 0) ^ 1;
    const flipped = `${iv}.${tag}.${bytes.toString('base64url')}`;
    expect(s.open('mcp-oauth/remote', { ...record, body: flipped })).toMatchObject({ ok: false });
    expect(seal().open('mcp-oauth/remote', record)).toMatchObject({ ok: false });
    expect(s.open('mcp-oauth/remote', { ...record, x: 2 })).toMatchObject({
      ok: false,
      reason: 'it is not a sealed record',
    });
  });
});
