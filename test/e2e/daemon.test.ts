/** The real daemon, the default organism.yaml, the real CLI: what a user sees after `npm start`. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DaemonProcess, runCli, startDaemonProcess } from '../helpers/daemon.ts';

let daemon: DaemonProcess;
beforeAll(async () => {
  daemon = await startDaemonProcess(['--config', 'organism.yaml']);
});
afterAll(async () => {
  await daemon?.stop();
});

const post = (
  path: string,
  body: unknown,
  headers: Record<string, string> = { 'content-type': 'application/json' },
) =>
  fetch(`${daemon.url}${path}`, {
    method: 'POST',
    headers: daemon.headers(headers),
    body: (typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body)) as BodyInit,
  });

describe('the default organism', () => {
  it('answers health checks on 127.0.0.1', async () => {
    expect(daemon.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await fetch(`${daemon.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('shows a multi-hop thread with `organism send --wait`', async () => {
    const { code, stdout, stderr } = await runCli([
      'send',
      '--url',
      daemon.url,
      '--to',
      'greeter',
      '<greeting><name>Ada</name></greeting>',
      '--wait',
    ]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const lines = stdout.trim().split('\n');
    const { thread } = JSON.parse(lines[0]!) as { thread: string };
    expect(lines.slice(1)).toEqual([
      'api -> greeter [message] <greeting><name>Ada</name></greeting>',
      'greeter -> shouter [message] <shout><text>Hello, Ada!</text></shout>',
      'shouter -> printer [message] <print><text>HELLO, ADA!</text><source>shouter</source></print>',
    ]);
    // The printer printed it in the daemon's log, tagged with the thread.
    await expect.poll(() => daemon.stdout()).toContain('HELLO, ADA!');
    const logLine = daemon
      .stdout()
      .split('\n')
      .find((l) => l.includes('HELLO, ADA!'))!;
    expect(JSON.parse(logLine)).toMatchObject({ thread, listener: 'printer' });

    const res = await fetch(`${daemon.url}/api/v1/threads/${thread}`, { headers: daemon.headers() });
    const view = (await res.json()) as {
      thread: string;
      messages: Array<{ from: string; to: string; payload: string; time: string }>;
    };
    expect(view.thread).toBe(thread);
    expect(view.messages.map((m) => `${m.from}->${m.to}`)).toEqual([
      'api->greeter',
      'greeter->shouter',
      'shouter->printer',
    ]);
    expect(view.messages.every((m) => !Number.isNaN(Date.parse(m.time)))).toBe(true);
  });
});

describe('bad input gets a clear 4xx and the daemon keeps serving', () => {
  it('refuses a DOCTYPE with <huh>', async () => {
    const res = await post('/api/v1/inject', {
      to: 'greeter',
      payload: '<!DOCTYPE g [<!ENTITY x SYSTEM "file:///etc/passwd">]><greeting><name>&x;</name></greeting>',
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string }; huh: string };
    expect(body.error.code).toBe('xml.doctype');
    expect(body.huh).toMatch(/^<huh><reason>parse<\/reason>/);
  });

  it('refuses a billion-laughs payload', async () => {
    const lol =
      '<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;">]><greeting><name>&lol2;</name></greeting>';
    const res = await post('/api/v1/inject', { to: 'greeter', payload: lol });
    expect(res.status).toBe(400);
  });

  it('refuses invalid UTF-8 in the request body', async () => {
    const bytes = Buffer.concat([
      Buffer.from('{"to":"greeter","payload":"<greeting><name>'),
      Buffer.from([0xc3, 0x28]),
      Buffer.from('</name></greeting>"}'),
    ]);
    const res = await post('/api/v1/inject', new Uint8Array(bytes));
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('xml.encoding');
  });

  it('refuses a payload that does not match the schema, naming the field', async () => {
    const res = await post('/api/v1/inject', {
      to: 'greeter',
      payload: '<greeting><nam>Ada</nam></greeting>',
    });
    expect(res.status).toBe(422);
    const body = (await res.json()) as { error: { message: string } };
    expect(body.error.message).toMatch(/name/);
  });

  it('refuses unknown targets, bad JSON and wrong content types', async () => {
    expect((await post('/api/v1/inject', { to: 'nobody', payload: '<x/>' })).status).toBe(404);
    expect((await post('/api/v1/inject', '{"to": ')).status).toBe(400);
    expect((await post('/api/v1/inject', '<greeting/>', { 'content-type': 'application/xml' })).status).toBe(
      415,
    );
    expect((await post('/api/v1/inject', { to: 'greeter' })).status).toBe(400);
    expect((await fetch(`${daemon.url}/api/v1/threads/nope`, { headers: daemon.headers() })).status).toBe(
      404,
    );
    expect((await fetch(`${daemon.url}/healthz`)).status).toBe(200);
  });
});

describe('shutdown', () => {
  it('drains and exits 0 on SIGTERM', async () => {
    const own = await startDaemonProcess(['--config', 'organism.yaml']);
    const inject = await fetch(`${own.url}/api/v1/inject`, {
      method: 'POST',
      headers: own.headers({ 'content-type': 'application/json' }),
      body: JSON.stringify({ to: 'greeter', payload: '<greeting><name>Bo</name></greeting>' }),
    });
    expect(inject.status).toBe(202);
    expect(await own.stop('SIGTERM')).toBe(0);
    expect(own.stdout()).toContain('organism stopped');
  });
});

describe('capability scope of an injected thread', () => {
  it('limits every tool call in the thread to the scope given at inject', async () => {
    const scoped = await runCli([
      'send',
      '--url',
      daemon.url,
      '--to',
      'toolbox',
      '<use-tool><tool>key_value_set</tool><args>{"key": "k", "value": 1}</args></use-tool>',
      '--scope',
      'read,db_read',
      '--wait',
    ]);
    expect(scoped.code).toBe(0);
    const answer = scoped.stdout.split('\n').find((l) => l.startsWith('toolbox -> api'))!;
    expect(answer).toContain('<status>refused</status>');
    expect(answer).toContain('outside this thread');

    const allowed = await runCli([
      'send',
      '--url',
      daemon.url,
      '--to',
      'toolbox',
      '<use-tool><tool>calculate</tool><args>{"expression": "6 * 7"}</args></use-tool>',
      '--scope',
      'read',
      '--wait',
    ]);
    expect(allowed.stdout.split('\n').find((l) => l.startsWith('toolbox -> api'))).toContain('"result":42');

    const bad = await post('/api/v1/inject', {
      to: 'toolbox',
      payload: '<use-tool><tool>calculate</tool></use-tool>',
      scope: ['root'],
    });
    expect(bad.status).toBe(400);
  });
});
