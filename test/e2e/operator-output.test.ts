/**
 * What an operator sees of a real daemon: every line on stdout is a JSON log record when stdout is
 * not a terminal (the "listening on" line too), nothing on stderr, pretty lines on a terminal; and
 * why a handler failed or timed out, in `organism threads ID`, `organism tail` and the API, while
 * the sender's SystemError stays generic.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DaemonProcess, ORGANISM_BIN, REPO_ROOT, runCli } from '../helpers/daemon.ts';
import {
  ADMIN_TOKEN,
  AUTH_YAML,
  call,
  FIXTURES,
  organismDir,
  startOn,
  TOKENS_ENV,
  until,
  VIEWER_TOKEN,
} from '../server/helpers.ts';

const THROWER = fileURLToPath(new URL('./failure-support/thrower.ts', import.meta.url));
/** Where the record must point: the throw in the thrower, relative to the daemon's folder. */
const THROWER_AT = `test/e2e/failure-support/thrower.ts:${
  readFileSync(THROWER, 'utf8')
    .split('\n')
    .findIndex((line) => line.includes('throw new RangeError')) + 1
}`;

const YAML = `organism:
  name: ops
${AUTH_YAML}listeners:
  - name: thrower
    handler: ${THROWER}
  - name: napper
    handler: ${FIXTURES}napper.ts
    timeout_ms: 300
`;

/** A viewer's CLI: no URL or token from the developer's shell. */
const viewer = (url: string) => ({ ORGANISM_URL: url, ORGANISM_TOKEN: VIEWER_TOKEN });

describe('a daemon seen by its operator', () => {
  let daemon: DaemonProcess;
  let file: string;

  beforeAll(async () => {
    ({ file } = await organismDir(YAML));
    daemon = await startOn(file, TOKENS_ENV);
  });
  afterAll(async () => {
    await daemon?.stop();
  });

  async function inject(to: string, payload: string): Promise<string> {
    const sent = await call(daemon.url, '/api/v1/inject', { token: ADMIN_TOKEN, body: { to, payload } });
    expect(sent.status).toBe(202);
    return sent.json.thread as string;
  }

  async function idle(thread: string): Promise<void> {
    await until(async () => {
      const view = await call(daemon.url, `/api/v1/threads/${thread}`, { token: VIEWER_TOKEN });
      return view.json?.status === 'idle' || undefined;
    });
  }

  it('writes only JSON lines to stdout, the listening record among them, and nothing to stderr', () => {
    const lines = daemon.stdout().trimEnd().split('\n');
    const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const listening = records.find((r) => typeof r.msg === 'string' && r.msg.includes('listening on'));
    expect(listening).toMatchObject({
      level: 30,
      url: daemon.url,
      msg: `organism 'ops' listening on ${daemon.url}`,
    });
    expect(daemon.stderr()).toBe('');
    // Built-in tools only, no user tool: nothing to sign, so no manifest warning.
    expect(daemon.stdout()).not.toContain('no tool manifest');
  });

  it('shows why a handler threw in `organism threads ID`; the sender gets the generic SystemError', async () => {
    const thread = await inject('thrower', '<boom><text>2024</text></boom>');
    await idle(thread);
    const { code, stdout, stderr } = await runCli(['threads', thread], viewer(daemon.url));
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const lines = stdout.split('\n');
    const failure = lines.find((l) => l.startsWith('thrower -> system [failure] '));
    expect(failure).toBe(
      'thrower -> system [failure] <failure><listener>thrower</listener><code>handler.failed</code>' +
        '<error>RangeError</error><message>ledger 2024 is closed (token [REDACTED])</message>' +
        `<at>${THROWER_AT}</at></failure>`,
    );
    const sent = lines.find((l) => l.startsWith('system -> api [system-error] '));
    expect(sent).toContain('<code>handler.failed</code>');
    for (const leak of ['RangeError', 'ledger', 'thrower.ts', ADMIN_TOKEN]) expect(sent).not.toContain(leak);
    expect(stdout).not.toContain(ADMIN_TOKEN);

    // The API a viewer reads says the same.
    const messages = await call(daemon.url, `/api/v1/messages?thread=${thread}&kind=failure`, {
      token: VIEWER_TOKEN,
    });
    expect(messages.status).toBe(200);
    expect(messages.json.messages).toHaveLength(1);
    expect(messages.json.messages[0].payload).toContain('<error>RangeError</error>');
  });

  it('shows a timed-out handler and its limit', async () => {
    const thread = await inject('napper', '<nap><ms>20000</ms></nap>');
    await idle(thread);
    const { code, stdout } = await runCli(['threads', thread], viewer(daemon.url));
    expect(code).toBe(0);
    expect(stdout).toContain(
      'napper -> system [failure] <failure><listener>napper</listener><code>handler.timeout</code>' +
        '<error>HandlerTimeoutError</error><message>handler napper timed out after 300 ms</message></failure>',
    );
    const sent = stdout.split('\n').find((l) => l.startsWith('system -> api [system-error] '));
    expect(sent).toContain('<code>handler.timeout</code>');
    expect(sent).not.toContain('300 ms');
  });

  it('shows the cause in `organism tail`', async () => {
    const tail = runCli(['tail', '--kind', 'failure', '--count', '1'], viewer(daemon.url));
    let done = false;
    void tail.then(() => {
      done = true;
    });
    // The stream only carries what happens once it is open: fail until tail has seen one.
    let n = 0;
    await until(async () => {
      if (done) return true;
      await inject('thrower', `<boom><text>${n++}</text></boom>`);
      return false;
    });
    const { code, stdout, stderr } = await tail;
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(
      /^\S+ \S{8} thrower -> system \[failure\] <failure><listener>thrower<\/listener><code>handler\.failed<\/code><error>RangeError<\/error><message>ledger \d+ is closed \(token \[REDACTED\]\)<\/message>/,
    );
    expect(stdout).toContain(`<at>${THROWER_AT}</at>`);
  });
});

describe('logs on a terminal', () => {
  it('are pretty lines, the listening line among them', async () => {
    const { dir, file } = await organismDir(
      `organism:\n  name: tty\nlisteners:\n  - name: napper\n    handler: ${FIXTURES}napper.ts\n`,
    );
    // script(1) gives the daemon a pseudo-terminal as its stdout.
    const command = `${process.execPath} ${ORGANISM_BIN} run --port 0 --config ${file}`;
    const child = spawn('script', ['-qfc', command, '/dev/null'], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      await until(() => out.includes('listening on') || undefined, 20_000);
      const plain = out.replace(/\u001b\[[0-9;]*m/g, '');
      const line = plain.split(/\r?\n/).find((l) => l.includes('listening on'))!;
      expect(line).toMatch(
        /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: organism 'tty' listening on http:\/\/127\.0\.0\.1:\d+/,
      );
      expect(plain).not.toMatch(/^\{/m);
    } finally {
      // The daemon under script: its pid is in the address file it wrote.
      const pid = await readFile(join(dir, '.organism', 'daemon.json'), 'utf8')
        .then((text) => (JSON.parse(text) as { pid: number }).pid)
        .catch(() => undefined);
      if (pid) process.kill(pid, 'SIGTERM');
      else child.kill('SIGKILL');
      await exited;
    }
  });
});
