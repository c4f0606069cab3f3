// biome-ignore-all lint/suspicious/noTemplateCurlyInString: shell text, ${t} included
/**
 * blocked_commands with `shell: true` (issue 25 point 5): a deny-list judges names, so a command
 * whose name is only known at run time cannot be judged by it. With blocked_commands set, the guard
 * refuses every command word built from an expansion (fails closed), whatever the trust level; the
 * tool checks the same again. allowed_commands is what says what may run.
 */
import { mkdtemp, readdir, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkShell } from '../../src/guard/index.ts';
import runCommand from '../../tools/run-command.ts';
import { makeContext } from '../tools/tool-helpers.ts';
import { BUILT_AT_RUN_TIME, PLAIN } from './blocked-cases.ts';

const blocked = { shell: true, blocked_commands: ['touch'] };

describe('blocked_commands fails closed on a command word built at run time', () => {
  for (const command of BUILT_AT_RUN_TIME) {
    it(`refuses ${JSON.stringify(command)} at every trust level, saying why`, () => {
      for (const trust of ['low', 'medium', 'high'] as const) {
        const v = checkShell(command, trust, blocked);
        expect(v.verdict, `${trust}: ${v.rule_id}`).toBe('deny');
        if (trust === 'high') {
          expect(v.rule_id).toMatch(/^shell\.config\.blocked_(command|unjudgeable)$/);
          if (v.rule_id === 'shell.config.blocked_unjudgeable') {
            expect(v.reason).toMatch(/blocked_commands cannot judge/);
            expect(v.suggestion).toContain('allowed_commands');
          }
        }
      }
    });
  }

  it('without blocked_commands, a high-trust listener may still run them (only warned about)', () => {
    for (const command of BUILT_AT_RUN_TIME) {
      const v = checkShell(command, 'high', { shell: true });
      expect(v.verdict, `${command}: ${v.rule_id}`).not.toBe('deny');
    }
  });

  it('commands with a literal name still run, expansions in their arguments too', () => {
    for (const command of PLAIN) {
      const v = checkShell(command, 'high', blocked);
      expect(v.verdict, `${command}: ${v.rule_id}`).not.toBe('deny');
    }
  });
});

describe('run_command checks the same itself (shell: true)', () => {
  let ws: string;
  beforeAll(async () => {
    ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'organism-blocked-')));
  });
  afterAll(async () => {
    await rm(ws, { recursive: true, force: true });
  });
  const run = (command: string, config: Record<string, unknown>) =>
    runCommand.run({ command }, makeContext({ config: { ...config, sandbox: 'none' }, workspace: ws }));

  it('refuses the issue spellings and a blocked name before anything runs', async () => {
    for (const command of [
      'x=touch; $x f',
      '${t}ch f',
      '${X:-touch} f',
      'set -- touch f; "$@"',
      'touch f',
      'ls; touch f',
    ]) {
      const error = await run(command, blocked).catch((e: unknown) => e);
      expect(error, command).toMatchObject({ code: 'command.not_allowed' });
    }
    expect(await readdir(ws)).toEqual([]);
  });

  it('runs the rest', async () => {
    const r = await run('x=hi; echo $x', blocked);
    expect(r.stdout).toBe('hi\n');
  });
});
