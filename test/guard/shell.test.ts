import { describe, expect, it } from 'vitest';
import { checkShell, MAX_COMMAND_BYTES } from '../../src/guard/shell/index.ts';
import { verdictFor } from '../../src/guard/types.ts';

describe('checkShell', () => {
  it('names the matched segment of a longer command line', () => {
    const v = checkShell('ls -la && cd src && git push --force origin main; echo done', 'medium');
    expect(v).toEqual({
      verdict: 'deny',
      rule_id: 'shell.git.push_force',
      reason: expect.stringContaining('Force push'),
      suggestion: expect.stringContaining('--force-with-lease'),
      segment: 'git push --force origin main',
    });
  });

  it('names the inner command when the match is inside sh -c', () => {
    expect(checkShell(`sudo sh -c 'cd / && rm -rf --no-preserve-root /'`, 'high').segment).toBe(
      'rm -rf --no-preserve-root /',
    );
  });

  it('gives a plain allow with nulls', () => {
    expect(checkShell('ls', 'medium')).toEqual({
      verdict: 'allow',
      rule_id: null,
      reason: null,
      suggestion: null,
    });
  });

  it('warns at high trust where medium denies, and the warning carries the rule', () => {
    expect(checkShell('git reset --hard', 'medium').verdict).toBe('deny');
    expect(checkShell('git reset --hard', 'high')).toMatchObject({
      verdict: 'warn',
      rule_id: 'shell.git.reset_hard',
    });
  });

  it('maps severities to verdicts per trust level', () => {
    expect(['low', 'medium', 'high'].map((t) => verdictFor('catastrophic', t as 'low'))).toEqual([
      'deny',
      'deny',
      'deny',
    ]);
    expect(['low', 'medium', 'high'].map((t) => verdictFor('destructive', t as 'low'))).toEqual([
      'deny',
      'deny',
      'warn',
    ]);
    expect(['low', 'medium', 'high'].map((t) => verdictFor('risky', t as 'low'))).toEqual([
      'deny',
      'warn',
      'warn',
    ]);
  });

  it('prefers a deny anywhere over an earlier warn', () => {
    expect(checkShell('git stash drop; git push -f', 'medium')).toMatchObject({
      verdict: 'deny',
      rule_id: 'shell.git.push_force',
    });
  });

  it('accepts exactly 8 KiB and refuses one byte more (counted in UTF-8)', () => {
    const pad = (n: number) => `echo ${'a'.repeat(n - 5)}`;
    expect(checkShell(pad(MAX_COMMAND_BYTES), 'medium').verdict).toBe('allow');
    expect(checkShell(pad(MAX_COMMAND_BYTES + 1), 'medium')).toMatchObject({
      verdict: 'deny',
      rule_id: 'shell.parse.too_long',
    });
    const multibyte = `echo ${'é'.repeat(4094)}`; // 5 + 8188 bytes
    expect(checkShell(multibyte, 'medium')).toMatchObject({ rule_id: 'shell.parse.too_long' });
  });

  it('refuses NUL bytes', () => {
    expect(checkShell('ls\0rm -rf /', 'medium').verdict).toBe('deny');
  });

  describe('tool_config', () => {
    it('blocked_commands denies a command at every trust level, also behind wrappers', () => {
      const cfg = { blocked_commands: ['/usr/bin/curl'] };
      for (const t of ['low', 'medium', 'high'] as const) {
        expect(checkShell('sudo timeout 5 curl https://example.com', t, cfg)).toMatchObject({
          verdict: 'deny',
          rule_id: 'shell.config.blocked_command',
        });
      }
      expect(checkShell('ls', 'medium', cfg).verdict).toBe('allow');
    });

    it('allowed_commands extends the low-trust known-safe set, and never lifts a rule', () => {
      const cfg = { allowed_commands: ['npm', 'rm'] };
      expect(checkShell('npm test', 'low').verdict).toBe('deny');
      expect(checkShell('npm test', 'low', cfg).verdict).toBe('allow');
      const prefixes = { allowed_commands: ['make build', ['cargo', 'check']] };
      expect(checkShell('make build', 'low', prefixes).verdict).toBe('allow');
      expect(checkShell('make install', 'low', prefixes).verdict).toBe('deny');
      expect(checkShell('cargo check --all', 'low', prefixes).verdict).toBe('allow');
      expect(checkShell('./cargo check', 'low', prefixes).verdict).toBe('deny');
      expect(checkShell('rm -rf /', 'low', cfg)).toMatchObject({
        verdict: 'deny',
        rule_id: 'shell.filesystem.rm_root',
      });
      expect(checkShell('npm publish', 'low', cfg)).toMatchObject({
        verdict: 'deny',
        rule_id: 'shell.publish.npm',
      });
    });
  });
});
