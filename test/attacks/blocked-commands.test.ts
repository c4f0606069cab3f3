// biome-ignore-all lint/suspicious/noTemplateCurlyInString: shell text, ${t} included
/**
 * Attack on blocked_commands with `shell: true` (issue 25 point 5), through the real daemon: a
 * high-trust listener whose run_command blocks `touch` ran it anyway by building the name with an
 * expansion (`x=touch; $x f`, `${t}ch`, `${X:-touch}`, `set -- touch f; "$@"`), which the guard
 * only warned about. Now every command word built at run time is refused while the list is set,
 * and nothing is created in the workspace.
 */
import { access, mkdir, mkdtemp, readdir, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILT_AT_RUN_TIME } from '../guard/blocked-cases.ts';
import { type DaemonProcess, REPO_ROOT, startDaemonProcess, useTool } from '../helpers/daemon.ts';

let dir: string;
let ws: string;
let daemon: DaemonProcess;

/** The four spellings, then siblings of each kind (builtins, eval, pipes, globs, aliases, find). */
const ATTACKS = [
  'x=touch; $x f',
  't=tou; ${t}ch f',
  '${X:-touch} f',
  'set -- touch f; "$@"',
  'x=touch; command $x f',
  'x=touch; eval "$x f"',
  'x=touch; echo "$x f" | sh',
  '`cat name.txt` f',
  '/usr/bin/tou?h f',
  'alias t=touch\nt f',
  'find /usr/bin -name touch -exec {} f \\;',
  "trap 'touch f' EXIT",
];

const exists = (p: string) =>
  access(p).then(
    () => true,
    () => false,
  );

beforeAll(async () => {
  dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'organism-blocked-')));
  ws = path.join(dir, '.organism', 'workspace');
  await mkdir(ws, { recursive: true });
  await writeFile(path.join(ws, 'name.txt'), 'touch');
  await writeFile(
    path.join(dir, 'organism.yaml'),
    `organism:
  name: blocked
listeners:
  - name: toolbox
    description: Calls tools.
    handler: ${path.join(REPO_ROOT, 'listeners', 'toolbox.ts')}
    trust: high
    tools: [run_command]
    tool_config:
      run_command:
        shell: true
        blocked_commands: [touch]
`,
  );
  daemon = await startDaemonProcess(['--config', path.join(dir, 'organism.yaml')]);
}, 30_000);

afterAll(async () => {
  await daemon?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('blocked_commands in the real daemon, shell: true', () => {
  it('every attack is one of the cases the guard tests cover', () => {
    for (const attack of ATTACKS) expect(BUILT_AT_RUN_TIME).toContain(attack);
  });

  for (const command of ATTACKS) {
    it(`refuses ${JSON.stringify(command)} and touches nothing`, async () => {
      await rm(path.join(ws, 'f'), { force: true });
      const { status, result } = await useTool(daemon.url, 'run_command', { command });
      expect(status).not.toBe('ok');
      expect(JSON.stringify(result)).toMatch(/blocked_commands/);
      expect(await exists(path.join(ws, 'f'))).toBe(false);
    }, 30_000);
  }

  it('says why, and what to use instead', async () => {
    const { result } = await useTool(daemon.url, 'run_command', { command: 'x=touch; $x f' });
    const text = JSON.stringify(result);
    expect(text).toContain('blocked_commands cannot judge');
    expect(text).toContain('allowed_commands');
  });

  it('other commands still run, expansions in their arguments included', async () => {
    await rm(path.join(ws, 'f'), { force: true });
    const { status, result } = await useTool(daemon.url, 'run_command', {
      command: 'x=made; echo "$x" > g.txt; cat g.txt',
    });
    expect(status).toBe('ok');
    expect(result.stdout).toBe('made\n');
    expect((await readdir(ws)).sort()).toEqual(['g.txt', 'name.txt']);
  });
});
