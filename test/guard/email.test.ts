import { describe, expect, it } from 'vitest';
import type { ToolConfig } from '../../src/config/types.ts';
import { checkEmail, type EmailArgs, recipientMatches } from '../../src/guard/email.ts';
import { type ExpectedVerdict, loadCorpus } from './corpus-cases.ts';

interface Case extends ExpectedVerdict {
  args: EmailArgs;
  tool_config: ToolConfig;
}

const cases = loadCorpus<Case>('email');

describe('email corpus', () => {
  it.each(
    cases.map((c) => [`${JSON.stringify(c.args).slice(0, 90)} ${JSON.stringify(c.tool_config)}`, c] as const),
  )('%s', (_n, c) => {
    const v = checkEmail(c.args, c.tool_config);
    expect({ verdict: v.verdict, rule_id: v.rule_id }).toEqual({ verdict: c.verdict, rule_id: c.rule_id });
  });
});

describe('checkEmail', () => {
  it('names the refused recipient and the allowed list', () => {
    const v = checkEmail(
      { to: ['ops@example.com', 'mallory@evil.com'] },
      { allowed_recipients: ['ops@example.com'] },
    );
    expect(v).toMatchObject({ verdict: 'deny', segment: 'mallory@evil.com' });
    expect(v.reason).toContain('mallory@evil.com');
    expect(v.suggestion).toContain('ops@example.com');
  });

  it('names the field that carries a line break', () => {
    const v = checkEmail(
      { to: 'ops@example.com', subject: 'a\r\nBcc: x@y.z' },
      { allowed_recipients: ['ops@example.com'] },
    );
    expect(v).toMatchObject({ rule_id: 'email.header_injection', segment: 'subject' });
  });

  it('matches recipients exactly or by *@domain, case-insensitively', () => {
    expect(recipientMatches('A@X.com', 'a@x.COM')).toBe(true);
    expect(recipientMatches('a@x.com', '*@X.com')).toBe(true);
    expect(recipientMatches('a@sub.x.com', '*@x.com')).toBe(false);
    expect(recipientMatches('a@evilx.com', '*@x.com')).toBe(false);
    expect(recipientMatches('a@x.com', 'b@x.com')).toBe(false);
  });
});
