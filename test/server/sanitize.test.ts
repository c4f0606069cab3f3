// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${VAR}` references written in organism.yaml are what these tests are about
import { describe, expect, it } from 'vitest';
import { sanitizeConfig } from '../../src/server/sanitize.ts';

describe('sanitizeConfig', () => {
  it('shows ${VAR} references as written, never the values they resolved to', () => {
    const loaded = {
      kv: { url: 'redis://:hunter2-password@cache:6379' },
      organism: { name: 'x', description: 'runs at prod-secret-host' },
      smtp: { password_env: 'SMTP_PASSWORD', user: 'mailer' },
    };
    const raw = {
      kv: { url: 'redis://:${KV_PASSWORD}@cache:6379' },
      organism: { name: 'x', description: 'runs at ${HOST_NAME}' },
      smtp: { password_env: 'SMTP_PASSWORD', user: 'mailer' },
    };
    const shown = JSON.stringify(sanitizeConfig(loaded, raw));
    expect(shown).toContain('redis://:${KV_PASSWORD}@cache:6379');
    expect(shown).toContain('runs at ${HOST_NAME}');
    expect(shown).toContain('"password_env":"SMTP_PASSWORD"');
    expect(shown).not.toContain('hunter2');
    expect(shown).not.toContain('prod-secret-host');
  });

  it('masks secret-looking keys, token hashes, defaults of secret references and credentials in text', () => {
    const loaded = {
      llm: {
        backends: [
          { provider: 'openai', api_key: 'sk-live-abcdefghijklmnopqrstuvwxyz', api_key_env: 'OPENAI_KEY' },
        ],
      },
      auth: { tokens: [{ name: 'a', role: 'admin', sha256: 'f'.repeat(64) }] },
      librarian: { password: 'fallback-pw' },
      bus: { url: 'redis://user:pw123456@host:6379' },
      listeners: [{ name: 'x', description: 'uses https://u:p4ssw0rd@api.example/' }],
    };
    const raw = { librarian: { password: '${LIB_PW:-fallback-pw}' } };
    const shown = sanitizeConfig(loaded, raw) as any;
    expect(shown.llm.backends[0].api_key).toBe('[REDACTED]');
    expect(shown.llm.backends[0].api_key_env).toBe('OPENAI_KEY');
    expect(shown.auth.tokens[0]).toEqual({ name: 'a', role: 'admin', sha256: '[REDACTED]' });
    expect(shown.librarian.password).toBe('${LIB_PW:-[REDACTED]}');
    expect(JSON.stringify(shown)).not.toMatch(/pw123456|p4ssw0rd|fallback-pw|sk-live/);
  });

  it('does not change the object it was given', () => {
    const loaded = { smtp: { password: 'x-secret' } };
    sanitizeConfig(loaded, {});
    expect(loaded.smtp.password).toBe('x-secret');
  });
});
