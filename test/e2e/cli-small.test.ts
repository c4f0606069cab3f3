/**
 * Small things a user of the CLI sees: the one-line example, a misspelt field named in the refusal,
 * a guard message that reads as sentences, the reload log line.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DaemonProcess } from '../helpers/daemon.ts';
import { runCli } from '../helpers/daemon.ts';
import { chainYaml, LISTENERS, organismDir, startOn } from '../server/helpers.ts';

const CLEAN = { ORGANISM_URL: '', ORGANISM_TOKEN: '' };

describe('organism describe --example', () => {
  it('prints the example on one line, ready for organism send', async () => {
    const { code, stdout } = await runCli(['describe', 'greeter', '--example']);
    expect(code).toBe(0);
    expect(stdout).toBe('<greeting><name>text</name></greeting>\n');
  });
});

describe('against a daemon', () => {
  let file: string;
  let daemon: DaemonProcess;

  beforeAll(async () => {
    ({ file } = await organismDir(`organism:\n  name: small\nlisteners:\n${chainYaml()}`));
    daemon = await startOn(file);
  });
  afterAll(async () => {
    await daemon?.stop();
  });

  it('a misspelt field is named beside the missing one', async () => {
    const { code, stderr } = await runCli(
      ['send', '--config', file, '--to', 'greeter', '<greeting><nam>Ada</nam></greeting>'],
      CLEAN,
    );
    expect(code).toBe(1);
    expect(stderr).toContain('422');
    expect(stderr).toContain(
      '<greeting> missing required field "name"; unknown field "nam": did you mean "name"?',
    );
  });

  it('the reload log line has one "time"', async () => {
    const { code } = await runCli(['reload', '--config', file], CLEAN);
    expect(code).toBe(0);
    const line = daemon
      .stdout()
      .split('\n')
      .find((l) => l.includes('"msg":"organism reloaded"'));
    expect(line).toBeDefined();
    expect(line!.match(/"time":/g)).toHaveLength(1);
    expect(JSON.parse(line!)).toMatchObject({ by: 'local', status: 'reloaded' });
  });
});

describe('a guard refusal', () => {
  it('reads as sentences: no ".;" between the reason and the suggestion', async () => {
    const { file } = await organismDir(
      `organism:\n  name: guarded\nlisteners:\n  - name: toolbox\n    handler: ${LISTENERS}toolbox.ts\n    tools: [run_command]\n`,
    );
    const { code, stdout } = await runCli([
      'tools',
      'call',
      'run_command',
      '{"command": "rm -rf /"}',
      '--as',
      'toolbox',
      '--config',
      file,
    ]);
    expect(code).toBe(2);
    const { error } = JSON.parse(stdout);
    expect(error.code).toBe('GuardDenied');
    expect(error.message).toBe(
      `denied by shell.filesystem.rm_root: Recursive delete of the filesystem root. ${error.suggestion}`,
    );
    expect(error.message).not.toContain('.;');
  });
});
