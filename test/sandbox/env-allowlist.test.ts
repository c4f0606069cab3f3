/**
 * env_allowlist names that look like secrets are refused before anything runs: by `organism
 * validate`, at the daemon's start, and (as before) by the call itself.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.ts';
import { ConfigError } from '../../src/errors.ts';
import { envAllowlistProblem } from '../../src/sandbox/index.ts';
import runCommand from '../../tools/run-command.ts';
import { REPO_ROOT, runCli, startDaemonProcess } from '../helpers/daemon.ts';
import { makeContext } from '../tools/tool-helpers.ts';

let dir: string;
let file: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'organism-env-allowlist-'));
  file = path.join(dir, 'organism.yaml');
  await writeFile(
    file,
    [
      'organism:',
      '  name: env-allowlist',
      'listeners:',
      '  - name: toolbox',
      '    description: Calls tools.',
      `    handler: ${path.join(REPO_ROOT, 'listeners', 'toolbox.ts')}`,
      '    tools: [run_command]',
      '    tool_config:',
      '      run_command:',
      '        env_allowlist: [FAKESECRET, GIT_AUTHOR_NAME, MYPASSWORD, DB_PASSWORDS, github_token]',
      '',
    ].join('\n'),
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const refused = [
  'listeners[0].tool_config.run_command.env_allowlist[0]',
  'listeners[0].tool_config.run_command.env_allowlist[2]',
  'listeners[0].tool_config.run_command.env_allowlist[3]',
  'listeners[0].tool_config.run_command.env_allowlist[4]',
];

describe('secret-looking env_allowlist names', () => {
  it('match as substrings, in any case', () => {
    for (const name of [
      'FAKESECRET',
      'MYPASSWORD',
      'DB_PASSWORDS',
      'github_token',
      'APIKEY',
      'AWS_CREDENTIALS',
      'SSH_AUTH_SOCK',
    ])
      expect(envAllowlistProblem(name), name).toMatch(/looks like a secret/);
    for (const name of ['GIT_AUTHOR_NAME', 'PYTHONPATH', 'NODE_ENV', 'COMPASS_DIR'])
      expect(envAllowlistProblem(name), name).toBeNull();
  });

  it('are refused by the loader, each by its path', async () => {
    const error = await loadConfig(file).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    const issues = (error as ConfigError).issues;
    expect(issues.map((i) => i.path)).toEqual(refused);
    expect(issues[0]!.message).toContain('FAKESECRET');
    expect(issues[0]!.message).toContain('looks like a secret');
  });

  it('fail `organism validate`', async () => {
    const { code, stderr } = await runCli(['validate', file]);
    expect(code).toBe(1);
    for (const at of refused) expect(stderr).toContain(at);
    expect(stderr).toContain('4 problems found');
  });

  it('stop the daemon from starting', async () => {
    const error = await startDaemonProcess(['--config', file]).catch((e: unknown) => e);
    expect(String(error)).toContain('daemon exited');
    expect(String(error)).toContain('listeners[0].tool_config.run_command.env_allowlist[0]');
  }, 30_000);

  it('are refused by the call too', async () => {
    for (const name of ['FAKESECRET', 'MYPASSWORD', 'DB_PASSWORDS']) {
      await expect(
        runCommand.run({ command: 'env' }, makeContext({ config: { env_allowlist: [name] } })),
      ).rejects.toMatchObject({ code: 'command.bad_config', message: expect.stringContaining(name) });
    }
  });
});
