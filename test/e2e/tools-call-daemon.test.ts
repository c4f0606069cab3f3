/**
 * `organism tools call` with a daemon running for the config: the call runs in that daemon, through
 * its one dispatcher, as the named listener (POST /api/v1/tools/:tool/call), so the CLI gets what
 * the listener's own call gets from what the daemon has loaded; audited once, with who called;
 * approval waits for a person. `--local` runs it in the CLI's own process, from the files as they
 * are now; with no daemon the call runs in-process as before. The route's credential and role
 * refusals: a viewer calls nothing, an operator calls as the `mcp` identity only, an admin (the
 * local token) as any listener; runtime names are no listener.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DaemonProcess, REPO_ROOT, runCli, startDaemonProcess } from '../helpers/daemon.ts';
import {
  ADMIN_TOKEN,
  AUTH_YAML,
  call,
  OPERATOR_TOKEN,
  TOKENS_ENV,
  until,
  VIEWER_TOKEN,
} from '../server/helpers.ts';

const TOOLBOX = join(REPO_ROOT, 'listeners', 'toolbox.ts');

/** A tool of the project that says which process ran it, and which version of its file. */
const whoami = (version: string) => `export default {
  name: 'whoami',
  description: 'Says which process runs it.',
  args: { type: 'object', properties: {}, additionalProperties: false },
  readOnly: true,
  capability: 'read',
  source: 'native',
  async run() {
    return { pid: process.pid, version: '${version}' };
  },
};
`;

const yaml = `organism:
  name: tools-call-daemon
tool_modules: [./tools]
listeners:
  - name: toolbox
    description: Calls tools.
    handler: ${TOOLBOX}
    tools: [whoami, calculate]
  - name: careful
    description: Calculates what a person approves.
    handler: ${TOOLBOX}
    payload: use-tool-careful
    tools: [calculate]
    tool_config:
      calculate: { approval: always }
mcp:
  tools: [calculate]
${AUTH_YAML}`;

let dir: string;
let file: string;
let daemon: DaemonProcess;
let daemonPid: number;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'organism-tools-call-'));
  file = join(dir, 'organism.yaml');
  await mkdir(join(dir, 'tools'));
  await writeFile(join(dir, 'tools', 'whoami.ts'), whoami('v1'));
  await writeFile(file, yaml);
  daemon = await startDaemonProcess(['--config', file], TOKENS_ENV);
  daemonPid = (await call(daemon.url, '/api/v1/organism', { token: ADMIN_TOKEN })).json.pid;
  expect(daemonPid).toBeGreaterThan(0);
}, 60_000);

afterAll(async () => {
  await daemon?.stop();
});

/** `organism tools call` as the person on the daemon's machine (the CLI finds the local token). */
const toolsCall = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  runCli(['tools', 'call', ...args, '--config', file], env);

/** The audit records of `tool`, newest first, as the API pages them. */
async function auditOf(tool: string): Promise<Array<Record<string, any>>> {
  const page = await call(daemon.url, `/api/v1/audit?tool=${tool}&limit=1000`, { token: ADMIN_TOKEN });
  expect(page.status, page.text).toBe(200);
  return page.json.records;
}

describe('organism tools call with the daemon running', () => {
  it("runs in the daemon and answers what the listener's own call gets; audited once, with who called", async () => {
    const ran = await toolsCall(['whoami', '--as', 'toolbox']);
    expect(ran.code, ran.stderr).toBe(0);
    const result = JSON.parse(ran.stdout);
    expect(result).toEqual({ status: 'ok', tool: 'whoami', value: { pid: daemonPid, version: 'v1' } });
    // The daemon's own listener calling it gets the same.
    const own = await call(daemon.url, '/api/v1/call', {
      token: OPERATOR_TOKEN,
      body: { to: 'toolbox', payload: '<use-tool><tool>whoami</tool><args>{}</args></use-tool>' },
    });
    expect(own.status, own.text).toBe(200);
    expect(own.json.reply.payload).toMatchObject({ tool: 'whoami', status: 'ok' });
    expect(JSON.parse(own.json.reply.payload.result)).toEqual(result.value);

    const records = (await auditOf('whoami')).filter((r) => String(r.thread).startsWith('api-'));
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ type: 'call', listener: 'toolbox', by: 'local', outcome: 'ok' });
    // The call and its result are in the thread history too, as a listener's are.
    const thread = await call(daemon.url, `/api/v1/threads/${records[0]!.thread}`, { token: ADMIN_TOKEN });
    expect(thread.status, thread.text).toBe(200);
    expect(thread.json.messages.map((m: { kind: string }) => m.kind)).toEqual(['tool-call', 'tool-result']);
  }, 60_000);

  it('the daemon answers from what it loaded; --local runs the file as saved, in the CLI', async () => {
    await writeFile(join(dir, 'tools', 'whoami.ts'), whoami('v2')); // saved, not reloaded
    const through = await toolsCall(['whoami', '--as', 'toolbox']);
    expect(JSON.parse(through.stdout).value).toEqual({ pid: daemonPid, version: 'v1' });
    const local = await toolsCall(['whoami', '--as', 'toolbox', '--local']);
    expect(local.code, local.stderr).toBe(0);
    const value = JSON.parse(local.stdout).value;
    expect(value.version).toBe('v2');
    expect(value.pid).not.toBe(daemonPid);
  }, 60_000);

  it('a call that needs approval waits for a person, then runs with the approval in its record', async () => {
    const started = toolsCall(['calculate', '--as', 'careful', '--args', '{"expression": "6 * 7"}']);
    const approval = await until(async () => {
      const list = await call(daemon.url, '/api/v1/approvals?listener=careful', { token: ADMIN_TOKEN });
      return (list.json?.approvals as Array<Record<string, any>> | undefined)?.find((a) =>
        String(a.thread).startsWith('api-'),
      );
    }, 30_000);
    expect(approval).toMatchObject({ tool: 'calculate', args: { expression: '6 * 7' } });
    const approved = await call(daemon.url, `/api/v1/approvals/${approval.id}/approve`, {
      token: OPERATOR_TOKEN,
      method: 'POST',
    });
    expect(approved.status, approved.text).toBe(200);
    const ran = await started;
    expect(ran.code, ran.stderr).toBe(0);
    expect(JSON.parse(ran.stdout)).toMatchObject({ status: 'ok', value: { result: 42 } });
    const records = (await auditOf('calculate')).filter((r) => r.thread === approval.thread);
    expect(records.filter((r) => r.type === 'call')).toEqual([
      expect.objectContaining({ listener: 'careful', by: 'local', approval: approval.id }),
    ]);
  }, 90_000);

  it('who may call as whom: admin as any listener, operator as mcp only, viewer nothing, no token 401', async () => {
    const ask = (token: string | null, as: string, tool = 'calculate') =>
      call(daemon.url, `/api/v1/tools/${tool}/call`, {
        token,
        body: { as, args: { expression: '1 + 1' } },
      });
    expect((await ask(null, 'toolbox')).status).toBe(401);
    const viewer = await ask(VIEWER_TOKEN, 'mcp');
    expect(viewer.status).toBe(403);
    expect(viewer.json.error.message).toBe(
      "calling a tool needs the operator role; token 'watcher' is viewer",
    );
    const operator = await ask(OPERATOR_TOKEN, 'toolbox');
    expect(operator.status).toBe(403);
    expect(operator.json.error).toEqual({
      code: 'auth.forbidden',
      message:
        "calling a tool as listener 'toolbox' (an operator may call as the mcp: section's identity only) needs the admin role; token 'ops' is operator",
    });
    const asMcp = await ask(OPERATOR_TOKEN, 'mcp');
    expect(asMcp.status, asMcp.text).toBe(200);
    expect(asMcp.json).toMatchObject({ listener: 'mcp', result: { status: 'ok', value: { result: 2 } } });
    const admin = await ask(ADMIN_TOKEN, 'toolbox');
    expect(admin.json).toMatchObject({ listener: 'toolbox', result: { status: 'ok', value: { result: 2 } } });

    // No listener of that name, and the runtime's own names are none.
    const typo = await ask(ADMIN_TOKEN, 'toolbx');
    expect(typo.status).toBe(404);
    expect(typo.json.error).toEqual({
      code: 'listener.not_found',
      message:
        "no listener named 'toolbx' (did you mean toolbox?); tools can be called as toolbox, careful, mcp",
    });
    for (const name of ['api', 'approvals', 'system'])
      expect((await ask(ADMIN_TOKEN, name)).status).toBe(404);
    // A tool the listener is not granted is a refusal it can read, like its own call's.
    const notGranted = await ask(ADMIN_TOKEN, 'careful', 'whoami');
    expect(notGranted.json.result).toMatchObject({ status: 'refused', error: { code: 'PermissionDenied' } });
    const bad = await call(daemon.url, '/api/v1/tools/calculate/call', {
      token: ADMIN_TOKEN,
      body: { as: 'toolbox', args: [1], extra: true },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.error.message).toContain('unknown field extra');

    const audited = (await auditOf('calculate')).filter((r) => r.type === 'call' && r.by === 'ops');
    expect(audited).toEqual([expect.objectContaining({ listener: 'mcp', outcome: 'ok' })]);
  }, 60_000);

  it('the CLI with an operator token says in one line why it may not', async () => {
    const ran = await toolsCall(['calculate', '--as', 'toolbox', '--args', '{"expression": "1"}'], {
      ORGANISM_TOKEN: OPERATOR_TOKEN,
    });
    expect(ran.code).toBe(1);
    expect(ran.stdout).toBe('');
    expect(ran.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(
        /403 auth\.forbidden: calling a tool as listener 'toolbox'.*needs the admin role/,
      ),
    ]);
  }, 60_000);
});

describe('organism tools call with no daemon', () => {
  it('runs in-process, as before', async () => {
    const quiet = await mkdtemp(join(tmpdir(), 'organism-tools-call-none-'));
    const config = join(quiet, 'organism.yaml');
    await writeFile(
      config,
      `organism:\n  name: no-daemon\nlisteners:\n  - name: toolbox\n    handler: ${TOOLBOX}\n    tools: [calculate]\n`,
    );
    const ran = await runCli([
      'tools',
      'call',
      'calculate',
      '--as',
      'toolbox',
      '--args',
      '{"expression": "2 + 3"}',
      '--config',
      config,
    ]);
    expect(ran.code, ran.stderr).toBe(0);
    expect(JSON.parse(ran.stdout)).toMatchObject({ status: 'ok', value: { result: 5 } });
  }, 60_000);
});
