/**
 * The real daemon, a listener granted run_command (shell: true, trust high, so the guard lets the
 * attacks through and only the sandbox stands in their way), and the attacks of issue 14 run as
 * scripts from the workspace, where no guard reads them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { access, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DaemonProcess, REPO_ROOT, runCli, startDaemonProcess, useTool } from '../helpers/daemon.ts';

const SECRET = 'fake-daemon-secret-7719';
let dir: string;
let file: string;
let dataDir: string;
let ws: string;
let daemon: DaemonProcess;

const toolbox = path.join(REPO_ROOT, 'listeners', 'toolbox.ts');
const yaml = () => `organism:
  name: sbx-name-4471
listeners:
  - name: toolbox
    description: Calls tools.
    handler: ${toolbox}
    trust: high
    tools: [run_command, key_value_set]
    tool_config:
      run_command:
        shell: true
  - name: loose
    description: Runs programs without a sandbox.
    handler: ${toolbox}
    payload: use-tool-loose
    tools: [run_command]
    tool_config:
      run_command:
        sandbox: none
`;

interface RunResult {
  stdout: string;
  stderr: string;
}

/** Calls `tool` through the toolbox listener; the call must have run. */
async function use(tool: string, args: object): Promise<RunResult> {
  const { status, result } = await useTool(daemon.url, tool, args);
  expect(status).toBe('ok');
  return result as RunResult;
}

/** Writes `script` into the workspace and runs it with run_command. */
async function attack(name: string, script: string): Promise<string> {
  await writeFile(path.join(ws, name), script);
  const { stdout, stderr } = await use('run_command', { command: `sh ${name}` });
  return stdout + stderr;
}

const exists = (p: string) =>
  access(p).then(
    () => true,
    () => false,
  );

beforeAll(async () => {
  dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'organism-sandbox-e2e-')));
  file = path.join(dir, 'organism.yaml');
  dataDir = path.join(dir, '.organism');
  ws = path.join(dataDir, 'workspace');
  await mkdir(ws, { recursive: true });
  await writeFile(file, yaml());
  await writeFile(path.join(dir, '.env'), 'SMTP_PASSWORD=dotenv-secret-e2e-5531\n');
  daemon = await startDaemonProcess(['--config', file], { ORGANISM_E2E_FAKE_SECRET: SECRET });
}, 30_000);

afterAll(async () => {
  await daemon?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('run_command in the real daemon, sandboxed', () => {
  it("cannot read the daemon's environment from /proc/<daemon pid>/environ", async () => {
    const pid = daemon.child.pid as number;
    // The secret is really there, on the host.
    expect(await readFile(`/proc/${pid}/environ`, 'utf8')).toContain(SECRET);
    const answer = await attack(
      'environ.sh',
      `grep -a -o 'ORGANISM_E2E_FAKE_SECRET=[^[:cntrl:]]*' /proc/${pid}/environ /proc/$PPID/environ\n` +
        `grep -a -r -h -o '${SECRET}' /proc/*/environ\necho end-environ\n`,
    );
    expect(answer).toContain('end-environ');
    expect(answer).not.toContain(SECRET);
  });

  it('cannot reach the data dir (kv, audit) by ../ or by absolute path, nor the .env beside the config', async () => {
    await use('key_value_set', { key: 'private', value: 'kv-value-e2e-8842' });
    const kvFiles = await readFile(path.join(dataDir, 'kv', 'kv.log'), 'utf8');
    expect(kvFiles).toContain('kv-value-e2e-8842');
    expect(await exists(path.join(dataDir, 'audit.jsonl'))).toBe(true);
    const answer = await attack(
      'data.sh',
      'cat ../kv/kv.log ../audit.jsonl; ls ..\n' +
        `cat ${dataDir}/kv/kv.log ${dataDir}/audit.jsonl; ls ${dataDir}\n` +
        `cat ${dir}/.env ../../.env ${file}; ls -a ${dir}\n` +
        'head -c 60 /etc//shadow\necho end-data\n',
    );
    expect(answer).toContain('end-data');
    expect(answer).not.toContain('kv-value-e2e-8842');
    expect(answer).not.toContain('key_value_set');
    // The listings show the workspace's bind and nothing else of the data dir or the config's folder.
    expect(answer.startsWith('workspace\nworkspace\n.\n..\n.organism\nend-data\n')).toBe(true);
    expect(answer).not.toContain('dotenv-secret-e2e-5531');
    expect(answer).not.toContain('sbx-name-4471');
    expect(answer).not.toContain('root:');
  });

  it('sees no host network address in /sys, no keyring in /proc/keys, and cannot fill /dev or /root', async () => {
    const macs = readdirSync('/sys/class/net')
      .map((name) => readFileSync(`/sys/class/net/${name}/address`, 'utf8').trim())
      .filter((mac) => mac !== '00:00:00:00:00:00');
    expect(macs.length).toBeGreaterThan(0);
    const answer = await attack(
      'host.sh',
      'cat /sys/class/net/*/address; find /sys -name address; cat /proc/keys /proc/key-users\n' +
        'touch /dev/x 2>&1; head -c 65536 /dev/zero > /root/x; echo end-host\n',
    );
    expect(answer).toContain('end-host');
    for (const mac of macs) expect(answer).not.toContain(mac);
    // The host's keyrings are listed there without the cover (`_uid.0: empty keyring` and the like).
    expect(readFileSync('/proc/keys', 'utf8')).toContain('keyring');
    expect(answer).not.toContain('keyring');
    expect(answer).toContain('/proc/key-users: Permission denied');
    expect(answer).toContain("touch: cannot touch '/dev/x': Read-only file system");
    expect(answer).toContain('No space left on device');
  });

  it('writes to /tmp do not land on the host', async () => {
    const name = `organism-e2e-${process.pid}-${Date.now()}`;
    const answer = await attack('tmp.sh', `touch /tmp/${name} && echo wrote-${name}\n`);
    expect(answer).toContain(`wrote-${name}`);
    expect(await exists(path.join('/tmp', name))).toBe(false);
  });

  it('a setsid process is dead after the call', async () => {
    const answer = await attack(
      'setsid.sh',
      `setsid sh -c 'sleep 1; touch ${ws}/late' > /dev/null 2>&1 &\nsleep 0.3\necho started\n`,
    );
    expect(answer).toContain('started');
    await new Promise((resolve) => setTimeout(resolve, 1800));
    expect(await exists(path.join(ws, 'late'))).toBe(false);
  });
});

describe('sandbox: none in the real daemon', () => {
  it('is warned about at start and shown by organism tools list', async () => {
    expect(daemon.stdout()).toMatch(/listener loose: run_command runs programs without a sandbox/);
    const listed = await runCli(['tools', 'list', '--config', file]);
    expect(listed.code).toBe(0);
    const line = listed.stdout.split('\n').find((l) => l.startsWith('run_command'));
    expect(line).toContain('[WARNING: loose: runs programs without a sandbox');
    const asToolbox = await runCli(['tools', 'list', '--config', file, '--as', 'toolbox']);
    expect(asToolbox.stdout.split('\n').find((l) => l.startsWith('run_command'))).not.toContain('[');
  });
});
