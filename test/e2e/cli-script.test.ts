/**
 * A CLI you can script, with the real daemon and the real CLI: the token and address from the .env
 * beside organism.yaml (sent only where they belong), `send --wait` exit codes by how the thread
 * ended, `send --json` printing the reply as JSON, did-you-mean for listener names, thread ids by
 * a prefix of 8+ characters.
 */
import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DaemonProcess } from '../helpers/daemon.ts';
import { ORGANISM_BIN, runCli } from '../helpers/daemon.ts';
import {
  ADMIN_TOKEN,
  AUTH_YAML,
  call,
  OPERATOR_TOKEN,
  organismDir,
  startOn,
  TOKENS_ENV,
  until,
  VIEWER_TOKEN,
} from '../server/helpers.ts';
import { CALL_LISTENERS } from './call-support/organism.ts';

// Each test runs the CLI several times, a process start each (seconds on a loaded 2-core box).
vi.setConfig({ testTimeout: 90_000 });

const CLEAN = { ORGANISM_URL: '', ORGANISM_TOKEN: '' };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const QUOTE = '<quote-request><item>pen</item><qty>3</qty></quote-request>';

let daemon: DaemonProcess;
/** The daemon's organism.yaml: the CLI finds the daemon and its local token through it. */
let file: string;

beforeAll(async () => {
  ({ file } = await organismDir(`organism:\n  name: scripted\n${AUTH_YAML}listeners:\n${CALL_LISTENERS}`));
  daemon = await startOn(file, TOKENS_ENV);
});
afterAll(async () => {
  await daemon?.stop();
});

/**
 * A project on another machine than the daemon's, as far as the CLI can tell: its own
 * organism.yaml (no daemon runs for it) and a .env with `dotEnv`.
 */
async function remoteProject(dotEnv: string): Promise<string> {
  const { dir, file: remote } = await organismDir('organism:\n  name: elsewhere\n  data_dir: ./data\n');
  await mkdir(join(dir, 'data'));
  await writeFile(join(dir, '.env'), dotEnv);
  return remote;
}

describe('ORGANISM_TOKEN and ORGANISM_URL in the .env beside organism.yaml', () => {
  /** An HTTP server that records the headers of every request and answers 401. */
  let spy: Server;
  let spyUrl: string;
  const seen: IncomingHttpHeaders[] = [];
  beforeAll(async () => {
    spy = createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end('{"error":{"code":"auth.required","message":"no"}}');
    });
    await new Promise<void>((resolve) => spy.listen(0, '127.0.0.1', resolve));
    spyUrl = `http://127.0.0.1:${(spy.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => spy.close(() => resolve())));

  it('are read: the CLI reaches the daemon the .env names with its token', async () => {
    const remote = await remoteProject(`ORGANISM_URL=${daemon.url}\nORGANISM_TOKEN=${OPERATOR_TOKEN}\n`);
    const status = await runCli(['status', '--config', remote], CLEAN);
    expect(status.stderr).toBe('');
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(`at ${daemon.url}`);
    expect(status.stdout).toMatch(/^organism scripted /);
    const sent = await runCli(['send', '--config', remote, '--to', 'quote', QUOTE], CLEAN);
    expect(sent.code).toBe(0);
    expect(JSON.parse(sent.stdout).thread).toMatch(UUID);
  });

  it('the process environment wins over the .env', async () => {
    const remote = await remoteProject(`ORGANISM_URL=${daemon.url}\nORGANISM_TOKEN=${OPERATOR_TOKEN}\n`);
    // A viewer may not inject: the environment's token is the one that was sent.
    const sent = await runCli(['send', '--config', remote, '--to', 'quote', QUOTE], {
      ORGANISM_URL: '',
      ORGANISM_TOKEN: VIEWER_TOKEN,
    });
    expect(sent.code).toBe(1);
    expect(sent.stderr).toContain('403');
    // The environment's address too: the spy is asked, not the .env's daemon.
    const before = seen.length;
    const status = await runCli(['status', '--config', remote], { ORGANISM_URL: spyUrl, ORGANISM_TOKEN: '' });
    expect(status.code).toBe(1);
    expect(seen.length).toBeGreaterThan(before);
  });

  it("the .env's token goes only to the address it belongs with, never to another --url or $ORGANISM_URL", async () => {
    const withUrl = await remoteProject(`ORGANISM_URL=${daemon.url}\nORGANISM_TOKEN=${OPERATOR_TOKEN}\n`);
    const tokenOnly = await remoteProject(`ORGANISM_TOKEN=${OPERATOR_TOKEN}\n`);
    seen.length = 0;
    await runCli(['status', '--config', withUrl, '--url', spyUrl], CLEAN);
    await runCli(['status', '--config', tokenOnly, '--url', spyUrl], CLEAN);
    await runCli(['status', '--config', tokenOnly], { ORGANISM_URL: spyUrl, ORGANISM_TOKEN: '' });
    expect(seen.length).toBeGreaterThanOrEqual(3);
    for (const headers of seen) expect(headers.authorization).toBeUndefined();
  });

  it('a token the daemon refuses is named by where it came from, never printed', async () => {
    const wrong = 'op-not-a-real-token-4711';
    const remote = await remoteProject(`ORGANISM_URL=${daemon.url}\nORGANISM_TOKEN=${wrong}\n`);
    for (const args of [
      ['status', '--config', remote],
      ['send', '--config', remote, '--to', 'quote', QUOTE],
    ]) {
      const r = await runCli(args, CLEAN);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('401');
      expect(r.stderr).toContain(
        'the token in ORGANISM_TOKEN of the .env beside organism.yaml was not accepted',
      );
      expect(r.stdout + r.stderr).not.toContain(wrong);
    }
  });
});

describe('organism send --wait: the exit code says how the thread ended', () => {
  const send = (...args: string[]) => runCli(['send', '--config', file, ...args], CLEAN);

  it('0 when the listener replied; the reply is printed', async () => {
    const r = await send('--to', 'quote', QUOTE, '--wait');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('quote -> api [response] <quote>');
  });

  it('3 on a handler failure, with one line saying so on stderr', async () => {
    const r = await send('--to', 'broken', '<break><text>purpose</text></break>', '--wait');
    expect(r.code).toBe(3);
    const thread = JSON.parse(r.stdout.split('\n')[0]!).thread as string;
    expect(r.stderr).toMatch(
      new RegExp(
        `^organism send: thread ${thread} failed without a reply from broken \\(the (failure|system-error) from broken above\\)\\n$`,
      ),
    );
    expect(r.stdout).toContain('boom on purpose');
  });

  it('4 when the thread is killed while it waits', async () => {
    const pending = send('--to', 'slow', '<slow><ms>20000</ms></slow>', '--wait');
    const thread = await until(async () => {
      const page = await call(daemon.url, '/api/v1/threads?status=active&listener=slow', {
        token: ADMIN_TOKEN,
      });
      return page.json.threads[0]?.thread as string | undefined;
    });
    // The CLI takes the 8 characters the dashboard shows.
    const killed = await runCli(['kill', '--config', file, thread.slice(0, 8)], CLEAN);
    expect(killed.stderr).toBe('');
    expect(killed.stdout).toContain(`thread ${thread}: stopped`);
    const r = await pending;
    expect(r.code).toBe(4);
    expect(r.stderr).toContain(`thread ${thread} was stopped without a reply from slow`);
  });

  it('5 when --timeout passes first; the thread goes on', async () => {
    const started = Date.now();
    const r = await send('--to', 'slow', '<slow><ms>1500</ms></slow>', '--wait', '--timeout', '300');
    expect(r.code).toBe(5);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(r.stderr).toMatch(/^organism send: no end within 300 ms; thread [0-9a-f-]{36} goes on\n$/);
  });

  it('0 when the thread ends without a reply and without a failure (a chain that ends elsewhere)', async () => {
    const r = await send('--to', 'greeter', '<greeting><name>Ada</name></greeting>', '--wait');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('shouter -> printer');
  });
});

describe('organism send --json: the reply as JSON', () => {
  const send = (...args: string[]) => runCli(['send', '--config', file, ...args], CLEAN);

  it("prints the reply's payload decoded by the listener's response schema", async () => {
    const r = await send('--to', 'quote', QUOTE, '--json');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const answer = JSON.parse(r.stdout);
    expect(answer.thread).toMatch(UUID);
    expect(answer.status).toBe('replied');
    expect(answer.reply.tag).toBe('quote');
    expect(answer.reply.payload).toEqual({ item: 'pen', qty: 3, total: 4.5, rush: false });
  });

  it('a failure: the error as JSON with the thread id on stdout, exit 3', async () => {
    const r = await send('--to', 'broken', '<break><text>json</text></break>', '--json');
    expect(r.code).toBe(3);
    const answer = JSON.parse(r.stdout);
    expect(answer.error.code).toBe('call.failed');
    expect(answer.error.thread).toMatch(UUID);
    expect(answer.error.failure.payload.message).toBe('boom on json');
    expect(r.stderr).toContain(`thread ${answer.error.thread} failed without a reply from broken`);
  });

  it('a timeout: exit 5 with the thread id', async () => {
    const r = await send('--to', 'slow', '<slow><ms>1500</ms></slow>', '--json', '--timeout', '200');
    expect(r.code).toBe(5);
    expect(JSON.parse(r.stdout).error).toMatchObject({
      code: 'call.timeout',
      thread: expect.stringMatching(UUID),
    });
  });

  it('a refusal is exit 1 with the reason on stderr; a misspelt listener gets a did-you-mean', async () => {
    const r = await send('--to', 'quot', QUOTE, '--json');
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      "organism send: 404 bus.routing: no listener named 'quot' — did you mean 'quote'?\n",
    );
  });
});

describe('did-you-mean for listener names, in every command', () => {
  it('send --to, pause, resume and describe name the listener likely meant', async () => {
    const sent = await runCli(['send', '--config', file, '--to', 'quot', QUOTE], CLEAN);
    expect(sent.code).toBe(1);
    expect(sent.stderr).toContain("no listener named 'quot' — did you mean 'quote'?");
    for (const command of ['pause', 'resume']) {
      const r = await runCli([command, '--config', file, 'brokn'], CLEAN);
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(
        `organism ${command}: 404 listener.not_found: no listener named 'brokn' — did you mean 'broken'?\n`,
      );
    }
    const described = await runCli(['describe', '--config', file, 'slwo'], CLEAN);
    expect(described.code).toBe(1);
    expect(described.stderr).toContain("no listener named 'slwo' — did you mean 'slow'?");
  });

  it('the API says it too (GET /listeners/:name, GET /tools?as=)', async () => {
    const r = await call(daemon.url, '/api/v1/listeners/qoute', { token: VIEWER_TOKEN });
    expect(r.status).toBe(404);
    expect(r.json.error.message).toBe("no listener named 'qoute' — did you mean 'quote'?");
    const tools = await call(daemon.url, '/api/v1/tools?as=slwo', { token: VIEWER_TOKEN });
    expect(tools.status).toBe(404);
    expect(tools.json.error.message).toBe("no listener named 'slwo' — did you mean 'slow'?");
  });

  it('a --listener filter that matches nothing because of a typo says so', async () => {
    const threads = await runCli(['threads', '--config', file, '--listener', 'qoute'], CLEAN);
    expect(threads.code).toBe(0);
    expect(threads.stdout).toBe('no threads match\n');
    expect(threads.stderr).toBe("organism threads: no listener named 'qoute' — did you mean 'quote'?\n");
    const tail = spawn(
      process.execPath,
      [ORGANISM_BIN, 'tail', '--config', file, '--listener', 'quote,slwo'],
      {
        env: { ...process.env, ...CLEAN },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    tail.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    try {
      await until(() => (stderr.includes('\n') ? true : undefined));
      expect(stderr).toBe("organism tail: no listener named 'slwo' — did you mean 'slow'?\n");
    } finally {
      tail.kill();
    }
  });
});

describe('thread ids by their first 8+ characters', () => {
  it('organism threads and kill take the prefix the dashboard and tail show; 7 characters are too few', async () => {
    const sent = await runCli(['send', '--config', file, '--to', 'quote', QUOTE, '--wait'], CLEAN);
    const thread = JSON.parse(sent.stdout.split('\n')[0]!).thread as string;
    const shown = await runCli(['threads', '--config', file, thread.slice(0, 8)], CLEAN);
    expect(shown.stderr).toBe('');
    expect(shown.stdout).toContain(`thread ${thread} (`);
    expect(shown.stdout).toContain('quote -> api [response]');
    const short = await runCli(['threads', '--config', file, thread.slice(0, 7)], CLEAN);
    expect(short.code).toBe(1);
    expect(short.stderr).toContain(
      `thread not found: ${thread.slice(0, 7)} (an id prefix needs at least 8 characters)`,
    );
    // Continuing the thread by its prefix.
    const again = await runCli(
      ['send', '--config', file, '--to', 'quote', QUOTE, '--thread', thread.slice(0, 10)],
      CLEAN,
    );
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout).thread).toBe(thread);
  });
});

describe('organism tail --thread by prefix', () => {
  it("follows the thread an 8-character prefix begins; an unknown prefix is the API's 404", async () => {
    const sent = await runCli(['send', '--config', file, '--to', 'quote', QUOTE, '--wait'], CLEAN);
    const thread = JSON.parse(sent.stdout.split('\n')[0]!).thread as string;
    const tail = spawn(
      process.execPath,
      [ORGANISM_BIN, 'tail', '--config', file, '--thread', thread.slice(0, 8), '--count', '1', '--json'],
      { env: { ...process.env, ...CLEAN }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    tail.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    const exited = new Promise<number | null>((resolve) => tail.on('exit', (code) => resolve(code)));
    let ended = false;
    void exited.then(() => {
      ended = true;
    });
    try {
      // Until tail has subscribed and seen one: another message in the thread, each second.
      while (!ended) {
        await runCli(
          ['send', '--config', file, '--to', 'quote', QUOTE, '--thread', thread.slice(0, 8)],
          CLEAN,
        );
        await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 1000))]);
      }
      expect(await exited).toBe(0);
      expect(JSON.parse(stdout.split('\n')[0]!).thread).toBe(thread);
    } finally {
      tail.kill();
    }
    const unknown = await runCli(['tail', '--config', file, '--thread', 'ffffffff', '--count', '1'], CLEAN);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('organism tail: 404 thread.not_found: thread not found: ffffffff\n');
  });
});

describe('a refused payload (422) lists every missing or wrong field', () => {
  const payload = '<quote-request><itme>pen</itme><qty>lots</qty></quote-request>';

  it('in the API answer, each field with its path', async () => {
    for (const path of ['/api/v1/inject', '/api/v1/call']) {
      const r = await call(daemon.url, path, { body: { to: 'quote', payload }, token: OPERATOR_TOKEN });
      expect(r.status).toBe(422);
      expect(r.json.error.message).toBe(
        '<quote-request> missing required field "item"; unknown field "itme": did you mean "item"?; field "qty": must be integer (got a string)',
      );
      expect(r.json.error.fields.map((f: { path: string }) => f.path)).toEqual(['item', 'qty']);
    }
  });

  it('in organism send', async () => {
    const r = await runCli(['send', '--config', file, '--to', 'quote', payload], CLEAN);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('missing required field "item"');
    expect(r.stderr).toContain('field "qty": must be integer (got a string)');
  });
});
