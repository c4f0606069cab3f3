/**
 * What the CLI prints when it cannot go on, with the real CLI (and the real daemon where one is
 * needed): `run` reports organism.yaml's problems exactly as `validate` does, a busy port is one
 * line, a reader that goes away (`organism status | head`) is one line and exit 141.
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type DaemonProcess, ORGANISM_BIN, REPO_ROOT, runCli } from '../helpers/daemon.ts';
import { chainYaml, organismDir, startOn } from '../server/helpers.ts';

// Each test runs the CLI several times, a process start each (seconds on a loaded 2-core box).
vi.setConfig({ testTimeout: 90_000 });

const CLEAN = { ORGANISM_URL: '', ORGANISM_TOKEN: '' };

describe('organism run with a bad organism.yaml', () => {
  it('prints every problem as file:line:column, exactly as validate does, and exits 1', async () => {
    const { dir } = await organismDir(
      `organism:\n  name: bad\nlisteners:\n${chainYaml()}  - name: extra\n    handler: ./nope.ts\n    bogus: 1\n`,
    );
    const validate = await runCli(['validate', '--config', `${dir}/organism.yaml`], CLEAN);
    const run = await runCli(['run', '--port', '0', '--config', `${dir}/organism.yaml`], CLEAN);
    expect(validate.code).toBe(1);
    expect(validate.stderr).toMatch(/organism\.yaml:\d+:\d+: listeners\[3\]\.bogus: unknown key 'bogus'/);
    expect(validate.stderr).toContain('organism.yaml: 2 problems found');
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(validate.stderr);
  });

  it('a grant checked at start (a misspelt tool) has its line and column too', async () => {
    const { file } = await organismDir(
      `organism:\n  name: bad-tool\nlisteners:\n${chainYaml()}  - name: toolbox\n    handler: ${REPO_ROOT}listeners/toolbox.ts\n    tools: [calculat]\n`,
    );
    const validate = await runCli(['validate', '--config', file], CLEAN);
    const run = await runCli(['run', '--port', '0', '--config', file], CLEAN);
    expect(validate.code).toBe(1);
    expect(validate.stderr).toMatch(
      new RegExp(
        `^${file.replaceAll('.', '\\.')}:14:13: listeners\\[3\\]\\.tools\\[0\\]: unknown tool "calculat" \\(did you mean calculate\\?\\)`,
      ),
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(validate.stderr);
  });
});

describe('organism run on a port in use', () => {
  let squatter: Server;
  let port: number;

  beforeAll(async () => {
    squatter = createServer();
    await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
    port = (squatter.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => squatter.close(() => resolve())));

  it('says so in one line, naming the address and what to change, and exits 1', async () => {
    const { file } = await organismDir(`organism:\n  name: busy\nlisteners:\n${chainYaml()}`);
    const { code, stderr } = await runCli(['run', '--port', String(port), '--config', file], CLEAN);
    expect(code).toBe(1);
    expect(stderr).toBe(
      `organism run: cannot listen on 127.0.0.1:${port}: the port is in use (another organism run, or another program); choose another with --port or server.port\n`,
    );
  });
});

describe('a reader that goes away', () => {
  let daemon: DaemonProcess;
  let file: string;

  beforeAll(async () => {
    ({ file } = await organismDir(`organism:\n  name: piped\nlisteners:\n${chainYaml()}`));
    daemon = await startOn(file);
  });
  afterAll(async () => {
    await daemon?.stop();
  });

  /** `organism <args>` whose stdout is closed by its reader before the command writes to it. */
  function closedStdout(args: string[]): Promise<{ code: number | null; stderr: string }> {
    const child = spawn(process.execPath, [ORGANISM_BIN, ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...CLEAN },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stderr })));
  }

  it('organism status | head: one line on stderr and exit 141, no stack', async () => {
    const { code, stderr } = await closedStdout(['status', '--config', file]);
    expect(stderr).toBe('organism: output stopped: the reader closed it (broken pipe)\n');
    expect(code).toBe(141);
    // The daemon it asked is unaffected.
    expect((await runCli(['status', '--config', file], CLEAN)).code).toBe(0);
  });

  it('organism --help | head alike', async () => {
    const { code, stderr } = await closedStdout(['--help']);
    expect({ code, stderr }).toEqual({
      code: 141,
      stderr: 'organism: output stopped: the reader closed it (broken pipe)\n',
    });
  });
});
