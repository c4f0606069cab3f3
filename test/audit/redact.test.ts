/** Secrets never reach the audit log: by key name, and by the shape of the value. */

import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeEscapes } from '../../src/audit/escapes.ts';
import {
  configSecrets,
  KnownSecrets,
  knownSecrets,
  REDACTED,
  redact,
  redactKnown,
  redactString,
  SecretMatcher,
  secretsFromConfig,
} from '../../src/audit/redact.ts';
import { keyVariants, leaks } from '../helpers/secrets.ts';

describe('redact', () => {
  it('keeps a "__proto__" key of the arguments in the record, as data (the attack: hide what was sent)', () => {
    // Parsed from a model's JSON, the key is an own property the tool (or an MCP server) receives;
    // assigned to the record's copy it would set the prototype and be missing from the audit log.
    const args = JSON.parse('{"path": "a.txt", "__proto__": {"command": "rm -rf /", "token": "x"}}');
    const out = redact(args) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(JSON.stringify(out)).toBe(
      '{"path":"a.txt","__proto__":{"command":"rm -rf /","token":"[REDACTED]"}}',
    );
  });

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

const OPENAI_KEY = 'sk-proj-Zq8xK2mP9vLr4TnB7wYc1HdF6gJs3AeU0iOp5Wt';
const ANTHROPIC_KEY = 'sk-ant-api03-Rm5Qw8Tz2Yx4Vb7Nc1Lk9Hg3Fd6Sa0Pj-Ue2Io4';

describe('known secrets', () => {
  for (const key of [OPENAI_KEY, ANTHROPIC_KEY]) {
    it(`catches ${key.slice(0, 7)}... in every form it is echoed in`, () => {
      const matcher = new SecretMatcher([key]);
      for (const [name, variant] of Object.entries(keyVariants(key))) {
        const out = matcher.redact(`the server said: ${variant} (end)`);
        expect(out, name).toContain(REDACTED);
        expect(out.startsWith('the server said: '), name).toBe(true);
        expect(out.endsWith(' (end)'), name).toBe(true);
        expect(leaks(out, key), `${name}: ${out}`).toEqual([]);
      }
    });
  }

  it('leaves text alone that shares fewer than 8 characters with a key', () => {
    const matcher = new SecretMatcher([OPENAI_KEY]);
    for (const text of [
      'sk-proj',
      'use sk-proj and Zq8xK2m for that',
      'base64 of nothing: aGVsbG8=',
      'SK-PROJ ok',
    ]) {
      expect(matcher.redact(text)).toBe(text);
    }
  });

  it('catches a short secret whole, in any case and base64, but never by prefix', () => {
    const matcher = new SecretMatcher(['hunter2']);
    expect(matcher.redact('pw hunter2 HUNTER2 aHVudGVyMg==')).toBe(
      `pw ${REDACTED} ${REDACTED} ${REDACTED}==`,
    );
    expect(matcher.redact('hunter and hunte')).toBe('hunter and hunte');
    expect(new SecretMatcher(['abc']).redact('abc')).toBe('abc');
  });

  it('is one registry: set per source, replaced on reload, used by redactString and redactKnown', () => {
    const registry = new KnownSecrets();
    registry.set('config:a', ['OldSecretValue111aa']);
    expect(registry.redact('x OldSecretValue111aa y')).toBe(`x ${REDACTED} y`);
    registry.set('config:a', ['NewSecretValue222bb']);
    expect(registry.redact('OldSecretValue111aa')).toBe('OldSecretValue111aa');
    expect(registry.redact('NEWSECRETVALUE222BB')).toBe(REDACTED);
    registry.delete('config:a');
    expect(registry.redact('NewSecretValue222bb')).toBe('NewSecretValue222bb');

    const value = 'Zz9-registry-Qq8-secret';
    knownSecrets.set('test:redact', [value]);
    try {
      expect(redactString(`said ${value.toUpperCase()}`)).toBe(`said ${REDACTED}`);
      expect(redact({ note: `x ${value.slice(0, 10)}` })).toEqual({ note: `x ${REDACTED}` });
      const plain = { a: [1, 'plain'] };
      expect(redactKnown(plain)).toBe(plain);
      expect(redactKnown({ a: [1, `in ${value}`] })).toEqual({ a: [1, `in ${REDACTED}`] });
    } finally {
      knownSecrets.delete('test:redact');
    }
    expect(redactString(`said ${value}`)).toBe(`said ${value}`);
  });

  it('takes the values of secret-looking variables a config file interpolates, from env or .env', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'organism-secrets-'));
    const file = join(dir, 'organism.yaml');
    await writeFile(
      file,
      // biome-ignore lint/suspicious/noTemplateCurlyInString: organism.yaml's ${VAR} syntax, as written in the file
      'kv:\n  url: redis://:${KV_PASS}@127.0.0.1:6379/0\nserver:\n  port: ${PORT:-7777}\nx: ${GH_TOKEN:-none}\ny: ${PUBLIC_KEY}\n',
    );
    await writeFile(join(dir, '.env'), 'GH_TOKEN=ghtoken-from-dotenv\nPORT=9999\n');
    const env = { KV_PASS: 'kv-pass-value', PORT: '8080', PUBLIC_KEY: 'public-value', SMTP_PW: 'x' };
    const found = await configSecrets(file, { smtp: { password_env: 'SMTP_PW_UNSET' } }, env);
    expect(found.sort()).toEqual(['ghtoken-from-dotenv', 'kv-pass-value']);
  });

  it('takes from a config the values of secret-looking *_env variables, not URLs or public keys', () => {
    const config = {
      llm: { backends: [{ api_key_env: 'K1', base_url_env: 'URL' }] },
      smtp: { password_env: 'PW' },
      auth: { tokens: [{ name: 'a', token_env: 'TOK' }] },
      web_search: { api_key_env: 'UNSET' },
      tools: { public_key_env: 'PUB' },
    };
    const env = {
      K1: 'key-one-value',
      URL: 'http://127.0.0.1:9',
      PW: 'pw-value',
      TOK: 'token-value',
      PUB: 'MCowBQYDK2VwAyEA',
    };
    expect(secretsFromConfig(config, env).sort()).toEqual(['key-one-value', 'pw-value', 'token-value']);
  });
});

/** Every byte of `text` as %XX (upper or lower hex digits). */
const percentAll = (text: string, upper = true) =>
  [...Buffer.from(text)]
    .map((b) => `%${b.toString(16).padStart(2, '0')[upper ? 'toUpperCase' : 'toLowerCase']()}`)
    .join('');
const charRefs = (text: string, hex: boolean) =>
  [...text].map((c) => (hex ? `&#x${c.codePointAt(0)!.toString(16)};` : `&#${c.codePointAt(0)};`)).join('');
const uEscapes = (text: string) =>
  [...text].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');

/** The encodings of a secret issue 25 found unredacted, and their mixes. */
function encodedVariants(key: string): Record<string, string> {
  const hex = Buffer.from(key).toString('hex');
  return {
    'hex, lower case': hex,
    'hex, upper case': hex.toUpperCase(),
    'hex, first 16 digits': hex.slice(0, 16),
    'hex with 0x': `0x${hex}`,
    '%XX of every byte, upper': percentAll(key),
    '%XX of every byte, lower': percentAll(key, false),
    '%XX of every other character': [...key].map((c, i) => (i % 2 ? percentAll(c) : c)).join(''),
    '%XX of the first 12 characters': percentAll(key.slice(0, 12)),
    'percent-encoded twice': percentAll(key).replaceAll('%', '%25'),
    '&#xNN; of every character': charRefs(key, true),
    '&#NN; of every character': charRefs(key, false),
    '&#NN without semicolons': charRefs(key, false).replaceAll(';', ''),
    'named references for punctuation': key.replaceAll('-', '&hyphen;').replaceAll('_', '&lowbar;'),
    'numeric reference for one character': `${key.slice(0, 5)}&#x${key.charCodeAt(5).toString(16)};${key.slice(6)}`,
    '\\uXXXX of every character': uEscapes(key),
    '\\uXXXX of every character, upper hex': uEscapes(key).toUpperCase().replaceAll('\\U', '\\u'),
    '\\u{X} of every character': [...key].map((c) => `\\u{${c.codePointAt(0)!.toString(16)}}`).join(''),
    '\\xNN of every byte': [...Buffer.from(key)].map((b) => `\\x${b.toString(16)}`).join(''),
    'a mix of all': [...key]
      .map((c, i) => [c, percentAll(c), charRefs(c, true), charRefs(c, false), uEscapes(c)][i % 5])
      .join(''),
  };
}

/** What the redacted text still shows of the key, read with its escapes decoded and as hex. */
function encodedLeaks(out: string, key: string): string[] {
  const decoded = decodeEscapes(out)?.text ?? out;
  const found = leaks(decoded, key);
  const hex = Buffer.from(key).toString('hex');
  for (let i = 0; i + 16 <= hex.length; i += 2) {
    if (out.toLowerCase().includes(hex.slice(i, i + 16))) {
      found.push('hex');
      break;
    }
  }
  return found;
}

describe('known secrets, encoded', () => {
  for (const key of [OPENAI_KEY, ANTHROPIC_KEY, 'pw"with\\odd&<chars>_9']) {
    it(`catches ${key.slice(0, 7)}... written as hex, %XX, HTML references, \\u escapes and mixes`, () => {
      const matcher = new SecretMatcher([key]);
      for (const [name, variant] of Object.entries(encodedVariants(key))) {
        const out = matcher.redact(`the tool said: ${variant} (end)`);
        expect(out, `${name}: ${variant}`).toContain(REDACTED);
        expect(out.startsWith('the tool said: '), `${name}: ${out}`).toBe(true);
        expect(out.endsWith(' (end)'), `${name}: ${out}`).toBe(true);
        expect(encodedLeaks(out, key), `${name}: ${out}`).toEqual([]);
        expect(matcher.test(variant), name).toBe(true);
      }
    });
  }

  it('redacts only the escaped span, and keeps the escapes around it', () => {
    const matcher = new SecretMatcher([OPENAI_KEY]);
    const text = `a%20b &amp; ${percentAll(OPENAI_KEY)} &lt;c&gt; \\u0041`;
    expect(matcher.redact(text)).toBe(`a%20b &amp; ${REDACTED} &lt;c&gt; \\u0041`);
    // Text with escapes but no secret is returned as it is.
    const clean = 'q=caf%C3%A9&amp;x=&#x41;&lt;\\u00e9 %zz &bogus; &#xZZ; \\u12';
    expect(matcher.redact(clean)).toBe(clean);
    expect(matcher.test(clean)).toBe(false);
  });

  it('reads XML entities only where they can write a secret: a secret with & < > " \' in it, or an escaped escape', () => {
    const xmlish = new SecretMatcher(['Tq9&Zr4<Wm2>Lk7']);
    expect(xmlish.redact('<x>Tq9&amp;Zr4&lt;Wm2&gt;Lk7</x>')).toBe(`<x>${REDACTED}</x>`);
    const plain = new SecretMatcher([OPENAI_KEY]);
    const xml = `<x>a &amp; b &lt;c&gt; &quot;d&quot; &apos;e&apos;</x>`;
    expect(plain.redact(xml)).toBe(xml);
    expect(plain.redact(`<x>${charRefs(OPENAI_KEY, true).replaceAll('&', '&amp;')}</x>`)).toBe(
      `<x>${REDACTED}</x>`,
    );
  });

  it('finds a secret through the registry and redactKnown too', () => {
    const value = 'Zz9-escaped-Qq8-secret';
    knownSecrets.set('test:escaped', [value]);
    try {
      expect(redactString(`said ${charRefs(value, true)}`)).toBe(`said ${REDACTED}`);
      expect(redactKnown({ note: `x ${uEscapes(value)}` })).toEqual({ note: `x ${REDACTED}` });
      expect(redactKnown({ hex: Buffer.from(value).toString('hex').toUpperCase() })).toEqual({
        hex: REDACTED,
      });
    } finally {
      knownSecrets.delete('test:escaped');
    }
  });
});

describe('zero bytes are no secret', () => {
  it('keeps runs of zero bytes read as base64 or hex, with or without known secrets', () => {
    const zeros = [
      'A'.repeat(44),
      Buffer.alloc(100).toString('base64'),
      Buffer.alloc(100).toString('base64url'),
      '0'.repeat(64),
      `${'A'.repeat(60)}1b`,
      `data:application/octet-stream;base64,${'A'.repeat(200)}`,
      `${'0'.repeat(40)}ff`,
    ];
    const matcher = new SecretMatcher([OPENAI_KEY, ANTHROPIC_KEY, 'hunter2', 'abcd']);
    for (const text of zeros) {
      expect(redactString(text), text).toBe(text);
      expect(matcher.redact(text), text).toBe(text);
    }
  });

  it('still redacts keys that have zero-byte runs around them, and hex keys', () => {
    const key = 'wJalrXUtnFEMI7K7MDENG2bPxRfiCYEXAMPLEKEY';
    expect(redactString(`AAAAAAAA${key}AAAAAAAA`)).toBe(REDACTED);
    expect(redactString('9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08')).toBe(REDACTED);
    expect(redactString(`0000${'9f86d081884c7d659a2feaa0'}0000`)).toBe(REDACTED);
  });
});
