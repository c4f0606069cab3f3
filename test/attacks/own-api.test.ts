/**
 * Attacks on the daemon's own API from inside its tools (issue 25, point 3), against the real
 * daemon with no auth.tokens (the default), real bubblewrap and real HTTP. A listener granted
 * fetch_url and webhook with allow_loopback, run_command with network: true, and an MCP HTTP
 * server configured at the daemon's own /mcp tries to approve a call waiting for a person, inject,
 * reload, pause and kill through the API. Nothing may change; the person's CLI still works with no
 * setup.
 */

import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DaemonProcess, REPO_ROOT, runCli, startDaemonProcess, useTool } from '../helpers/daemon.ts';
import { call, LISTENERS, until } from '../server/helpers.ts';

const TOOLBOX = path.join(REPO_ROOT, 'listeners', 'toolbox.ts');
let dir: string;
let file: string;
let dataDir: string;
let port: number;
let daemon: DaemonProcess;
let redirector: Server;
let redirectorUrl: string;
/** The call waiting for a person, and its thread. */
let approvalId: string;
let approvalThread: string;

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port: p } = s.address() as AddressInfo;
  await new Promise((resolve) => s.close(resolve));
  return p;
}

const yaml = () => `organism:
  name: own-api-attack
listeners:
  - name: toolbox
    description: Calls tools.
    handler: ${TOOLBOX}
    trust: high
    tools: [fetch_url, webhook, run_command, read_file, self.printer]
    tool_config:
      fetch_url: { allow_loopback: true }
      webhook: { allow_loopback: true }
      run_command: { shell: true, network: true }
  - name: careful
    description: Runs commands a person approves.
    handler: ${TOOLBOX}
    payload: use-tool-careful
    trust: high
    timeout_ms: 900000
    tools: [run_command]
    tool_config:
      run_command: { shell: true, approval: always }
  - name: printer
    handler: ${LISTENERS}printer.ts
    mcp: true
mcp_servers:
  - name: self
    url: http://127.0.0.1:${port}/mcp
    start: lazy
    capabilities: { printer: write }
`;

/** The person's view of the API: with the daemon's local token. */
const api = (p: string, options: Parameters<typeof call>[2] = {}) =>
  call(daemon.url, p, { token: daemon.token, ...options });

const injectBody = (text: string) =>
  JSON.stringify({ to: 'printer', payload: `<print><text>${text}</text></print>` });

/** Threads that reached the printer with `text`: an injection that got through. */
async function printed(text: string): Promise<boolean> {
  return daemon.stdout().includes(`"printed":"${text}"`);
}

async function approvalState(): Promise<string> {
  const res = await api(`/api/v1/approvals/${approvalId}`);
  expect(res.status, res.text).toBe(200);
  return res.json.state as string;
}

async function reloads(): Promise<number> {
  const res = await api('/api/v1/organism');
  expect(res.status, res.text).toBe(200);
  return res.json.reloads.applied as number;
}

async function paused(listener: string): Promise<boolean> {
  const res = await api(`/api/v1/listeners/${listener}`);
  expect(res.status, res.text).toBe(200);
  return Boolean(res.json.state?.paused);
}

beforeAll(async () => {
  dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'organism-own-api-')));
  file = path.join(dir, 'organism.yaml');
  dataDir = path.join(dir, '.organism');
  port = await freePort();
  await writeFile(file, yaml());
  daemon = await startDaemonProcess(['--config', file, '--port', String(port)]);
  // A server on another loopback port that sends every request on to the daemon's API (307 keeps
  // the method and the body).
  redirector = createServer((req, res) => {
    if (req.url === '/plain') res.writeHead(200, { 'content-type': 'text/plain' }).end('plain');
    else res.writeHead(307, { location: `http://127.0.0.1:${port}${req.url}` }).end();
  });
  await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
  redirectorUrl = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}`;

  // A call waiting for a person: `careful` asks to write a marker file.
  const payload = `<use-tool-careful><tool>run_command</tool><args>${JSON.stringify({ command: 'echo ran > approved.txt' }).replaceAll('&', '&amp;').replaceAll('<', '&lt;')}</args></use-tool-careful>`;
  const injected = await api('/api/v1/inject', { body: { to: 'careful', payload } });
  expect(injected.status, injected.text).toBe(202);
  approvalThread = injected.json.thread;
  const pending = await until(async () => {
    const res = await api('/api/v1/approvals');
    return (res.json?.approvals as any[] | undefined)?.find((a) => a.thread === approvalThread);
  }, 30_000);
  approvalId = pending.id;
}, 60_000);

afterAll(async () => {
  await daemon?.stop();
  redirector?.close();
  await rm(dir, { recursive: true, force: true });
});

/**
 * Spellings of the daemon's address (it listens on 127.0.0.1) that reach it or its loopback; every
 * other one is in test/guard/own-api.test.ts, against the guard itself.
 */
const spellings = () => [
  `http://127.0.0.1:${port}`,
  `http://localhost:${port}`,
  `http://[::ffff:127.0.0.1]:${port}`,
  `http://2130706433:${port}`,
  `http://127.0.0.2:${port}`,
];

describe('fetch_url and webhook with allow_loopback', () => {
  it('are refused the daemon own API under several spellings of its address', async () => {
    for (const [i, base] of spellings().entries()) {
      const text = `fetch-spelling-${i}`;
      const fetched = await useTool(daemon.url, 'fetch_url', {
        url: `${base}/api/v1/inject`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: injectBody(text),
      });
      expect(fetched.status, `${base}: ${JSON.stringify(fetched.result)}`).not.toBe('ok');
      expect(JSON.stringify(fetched.result), base).toContain('web.own_api');
      expect(await printed(text)).toBe(false);
    }
    for (const base of spellings().slice(0, 3)) {
      const hooked = await useTool(daemon.url, 'webhook', {
        url: `${base}/api/v1/approvals/${approvalId}/approve`,
        payload: {},
      });
      expect(hooked.status, `${base}: ${JSON.stringify(hooked.result)}`).not.toBe('ok');
      expect(JSON.stringify(hooked.result), base).toContain('web.own_api');
    }
    expect(await approvalState()).toBe('pending');
  }, 120_000);

  it('are refused it through a redirect from another loopback server', async () => {
    const fetched = await useTool(daemon.url, 'fetch_url', {
      url: `${redirectorUrl}/api/v1/inject`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: injectBody('redirected-inject'),
    });
    expect(fetched.status, JSON.stringify(fetched.result)).not.toBe('ok');
    expect(JSON.stringify(fetched.result)).toContain('web.own_api');
    const hooked = await useTool(daemon.url, 'webhook', {
      url: `${redirectorUrl}/api/v1/approvals/${approvalId}/approve`,
      payload: {},
    });
    expect(hooked.status, JSON.stringify(hooked.result)).not.toBe('ok');
    expect(JSON.stringify(hooked.result)).toContain('web.own_api');
    expect(await printed('redirected-inject')).toBe(false);
    expect(await approvalState()).toBe('pending');
  }, 60_000);

  it('still reach another service on loopback (allow_loopback keeps its meaning)', async () => {
    const fetched = await useTool(daemon.url, 'fetch_url', { url: `${redirectorUrl}/plain` });
    expect(fetched.status, JSON.stringify(fetched.result)).toBe('ok');
    expect(fetched.result.body).toBe('plain');
  }, 60_000);
});

describe('organism tools call, run beside the daemon', () => {
  it('refuses the running daemon API to the call it runs too, in the daemon and with --local', async () => {
    // Without --local the call runs in the daemon (POST /api/v1/tools/fetch_url/call); with it, in
    // the CLI's own process, which knows the daemon's address from its data dir all the same.
    for (const where of [[], ['--local']]) {
      const called = await runCli([
        'tools',
        'call',
        'fetch_url',
        '--as',
        'toolbox',
        '--config',
        file,
        ...where,
        '--args',
        JSON.stringify({ url: `http://localhost:${port}/api/v1/organism` }),
      ]);
      expect(called.code, called.stdout + called.stderr).toBe(2);
      expect(called.stdout).toContain('web.own_api');
    }
  }, 90_000);
});

describe('an MCP HTTP server configured at the daemon own /mcp', () => {
  it('is refused: its tools never run, nothing is injected', async () => {
    const used = await useTool(daemon.url, 'self.printer', { text: 'mcp-inject' });
    expect(used.status, JSON.stringify(used.result)).not.toBe('ok');
    expect(JSON.stringify(used.result)).toContain("this organism's own API");
    expect(await printed('mcp-inject')).toBe(false);
  }, 60_000);
});

describe('run_command with network: true', () => {
  /** Runs `curl` in the sandbox against the daemon; returns the HTTP status it got. */
  async function curl(method: string, route: string, body?: string): Promise<string> {
    const data = body === undefined ? '' : ` -H 'content-type: application/json' --data '${body}'`;
    const { status, result } = await useTool(daemon.url, 'run_command', {
      command: `curl -s -o /dev/null -w '%{http_code}' -X ${method}${data} http://127.0.0.1:${port}${route}`,
    });
    expect(status, JSON.stringify(result)).toBe('ok');
    return String(result.stdout).trim();
  }

  it('reaches the API but changes nothing: approve, inject, reload, pause, kill, /mcp, a tool call are 401', async () => {
    const before = await reloads();
    const attempts: Array<[string, string, string?]> = [
      ['POST', `/api/v1/approvals/${approvalId}/approve`],
      ['POST', '/api/v1/inject', injectBody('curl-inject')],
      ['POST', '/api/v1/organism/reload'],
      ['POST', '/api/v1/listeners/printer/pause'],
      ['POST', `/api/v1/threads/${approvalThread}/kill`],
      // A call as another listener, with that listener's grants (POST /tools/:tool/call).
      [
        'POST',
        '/api/v1/tools/run_command/call',
        JSON.stringify({ as: 'careful', args: { command: 'touch x' } }),
      ],
      [
        'POST',
        '/mcp',
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'printer', arguments: { text: 'curl-mcp' } },
        }),
      ],
    ];
    for (const [method, route, body] of attempts) {
      expect(await curl(method, route, body), `${method} ${route}`).toBe('401');
    }
    expect(await approvalState()).toBe('pending');
    expect(await printed('curl-inject')).toBe(false);
    expect(await printed('curl-mcp')).toBe(false);
    expect(await reloads()).toBe(before);
    expect(await paused('printer')).toBe(false);
    const thread = await api(`/api/v1/threads/${approvalThread}`);
    expect(thread.json.status).not.toBe('stopped');
  }, 120_000);

  it('reads nothing either: threads, approvals, audit, config, metrics are 401', async () => {
    for (const route of [
      '/api/v1/threads',
      `/api/v1/threads/${approvalThread}`,
      '/api/v1/approvals',
      '/api/v1/audit',
      '/api/v1/organism/config',
      '/metrics',
    ]) {
      expect(await curl('GET', route), route).toBe('401');
    }
    // The liveness probe stays open: it says nothing.
    expect(await curl('GET', '/healthz')).toBe('200');
  }, 60_000);

  it('cannot find the token: not in the data dir, the environment, /proc or argv', async () => {
    const token = daemon.token;
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    const script = [
      `cat ${dataDir}/api-token 2>&1`,
      `ls -la ${dataDir} 2>&1`,
      'env',
      'cat /proc/*/environ 2>/dev/null | tr "\\0" "\\n"',
      'cat /proc/*/cmdline 2>/dev/null | tr "\\0" " "',
      `grep -rs ${token} /tmp ${dir} $HOME 2>/dev/null | head -3`,
    ].join('; echo ---; ');
    await writeFile(path.join(dataDir, 'workspace', 'look.sh'), script);
    const { status, result } = await useTool(daemon.url, 'run_command', { command: 'sh look.sh' });
    expect(status, JSON.stringify(result)).toBe('ok');
    const seen = `${result.stdout}${result.stderr}`;
    expect(seen).not.toContain(token);
    expect(seen).not.toContain(token!.slice(0, 16));
    // A file tool cannot read it either: the data dir is the organism's own.
    const read = await useTool(daemon.url, 'read_file', { path: path.join(dataDir, 'api-token') });
    expect(read.status).not.toBe('ok');
    const relative = await useTool(daemon.url, 'read_file', { path: '../api-token' });
    expect(relative.status).not.toBe('ok');
    expect(JSON.stringify([read, relative])).not.toContain(token);
  }, 60_000);
});

describe('the token on disk and in the log', () => {
  it('is 0600 in a data dir others cannot read, and no log line holds it', async () => {
    const { stat } = await import('node:fs/promises');
    const info = await stat(path.join(dataDir, 'api-token'));
    expect(info.mode & 0o777).toBe(0o600);
    expect((await stat(dataDir)).mode & 0o077).toBe(0);
    expect(daemon.stdout() + daemon.stderr()).not.toContain(daemon.token!);
    const audit = await readFile(path.join(dataDir, 'audit.jsonl'), 'utf8').catch(() => '');
    expect(audit).not.toContain(daemon.token!);
  });
});

describe('the person on the same machine, with no setup', () => {
  it('approves with `organism approvals approve`; `send` and `reload` work too', async () => {
    const env = { ORGANISM_TOKEN: '', ORGANISM_URL: '' };
    const sent = await runCli(
      ['send', '--config', file, '--to', 'printer', '<print><text>cli-sent</text></print>'],
      env,
    );
    expect(sent.code, sent.stdout + sent.stderr).toBe(0);
    await until(async () => (await printed('cli-sent')) || undefined);
    const before = await reloads();
    const reloaded = await runCli(['reload', '--config', file], env);
    expect(reloaded.code, reloaded.stdout + reloaded.stderr).toBe(0);
    expect(await reloads()).toBe(before + 1);
    const approved = await runCli(['approvals', 'approve', approvalId, '--config', file], env);
    expect(approved.code, approved.stdout + approved.stderr).toBe(0);
    await until(async () => (await approvalState()) === 'approved' || undefined);
    const decided = await api(`/api/v1/approvals/${approvalId}`);
    expect(decided.json.decided_by).toBe('local');
    await until(async () =>
      (await readFile(path.join(dataDir, 'workspace', 'approved.txt'), 'utf8').catch(() => '')).includes(
        'ran',
      )
        ? true
        : undefined,
    );
  }, 60_000);
});
