/** Secrets never reach the audit log: by key name, and by the shape of the value. */
import { describe, expect, it } from 'vitest';
import { REDACTED, redact, redactString } from '../../src/audit/redact.ts';

describe('redact', () => {
  it('replaces values under secret-looking keys at any depth, without changing the input', () => {
    const input = {
      url: 'https://api.example.com/x',
      headers: { Authorization: 'Bearer abc', 'X-Api-Key': 'k', accept: 'json' },
      password: 'hunter2',
      nested: [{ client_secret: 's', ok: 1 }],
      access_token: 't',
    };
    const copy = structuredClone(input);
    expect(redact(input)).toEqual({
      url: 'https://api.example.com/x',
      headers: { Authorization: REDACTED, 'X-Api-Key': REDACTED, accept: 'json' },
      password: REDACTED,
      nested: [{ client_secret: REDACTED, ok: 1 }],
      access_token: REDACTED,
    });
    expect(input).toEqual(copy);
  });

  it('scrubs values that look like credentials wherever they appear', () => {
    const cases: Array<[string, string]> = [
      ['curl -H "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9abc.def" x', 'abc.def'],
      ['key sk-proj-abcdefghijklmnop1234567890', 'sk-proj-abcdefghijklmnop'],
      ['token ghp_abcdefghijklmnopqrstuvwxyz0123456789', 'ghp_abcdefghijkl'],
      ['AWS AKIAIOSFODNN7EXAMPLE here', 'AKIAIOSFODNN7EXAMPLE'],
      ['https://user:s3cr3tpass@db.example.com/x', 's3cr3tpass'],
      ['https://x.example.com/cb?api_key=abcd1234&q=cats', 'abcd1234'],
      ['OPENAI_API_KEY=zzzzzzzz ./run.sh', 'zzzzzzzz'],
      ['slack xoxb-123456789012-abcdefABCDEF', 'xoxb-123456789012'],
      ['random wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY end', 'wJalrXUtnFEMI'],
      ['-----BEGIN PRIVATE KEY-----\nMIIabc\n-----END PRIVATE KEY-----', 'MIIabc'],
    ];
    for (const [text, secret] of cases) {
      const out = redactString(text);
      expect(out, text).not.toContain(secret);
      expect(out, text).toContain(REDACTED);
    }
  });

  it('leaves ordinary text, paths, ids and numbers alone', () => {
    for (const text of [
      'ls -R | grep rm',
      '/data/research/reports/2024/quarterly-summary.txt',
      '550e8400-e29b-41d4-a716-446655440000',
      'The quick brown fox jumps over the lazy dog 42 times',
      'https://api.example.com/v1/items?page=2',
    ]) {
      expect(redactString(text)).toBe(text);
    }
    expect(redact({ n: 1, ok: true, none: null })).toEqual({ n: 1, ok: true, none: null });
  });

  it('cuts very long strings so one call cannot bloat the log', () => {
    const out = redact({ content: 'x'.repeat(10_000) }) as { content: string };
    expect(out.content.length).toBeLessThan(2200);
    expect(out.content).toContain('[7952 more chars]');
  });
});
