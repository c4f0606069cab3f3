/**
 * send_email end to end against a real SMTP server on 127.0.0.1 (the smtp-server package), with
 * authentication, so the password path from smtp.password_env is exercised too.
 */
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { SMTPServer } from 'smtp-server';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseAddress } from '../../tools/lib/mail-headers.ts';
import sendEmail from '../../tools/send-email.ts';
import {
  configIn,
  removeTempDirs,
  type TestServices,
  tempDir,
  testServices,
  toolContext,
} from '../kv/fixtures.ts';

const PASSWORD_ENV = 'ORGANISM_TEST_SMTP_PASSWORD';
const PASSWORD = `pw-${randomUUID()}`;
const USER = 'organism-agent';

interface Received {
  from: string;
  to: string[];
  raw: string;
}

let server: SMTPServer;
let port: number;
let received: Received[] = [];
let connections = 0;
const opened: TestServices[] = [];

beforeAll(async () => {
  process.env[PASSWORD_ENV] = PASSWORD;
  server = new SMTPServer({
    authOptional: false,
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onConnect(_session, cb) {
      connections++;
      cb();
    },
    onAuth(auth, _session, cb) {
      if (auth.username === USER && auth.password === PASSWORD) cb(null, { user: USER });
      else cb(new Error('Invalid username or password'));
    },
    onRcptTo(address, _session, cb) {
      if (address.address.endsWith('@blocked.example')) cb(new Error('No such mailbox here'));
      else cb();
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.server.address() as net.AddressInfo).port;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(resolve));
  delete process.env[PASSWORD_ENV];
  await removeTempDirs();
});

beforeEach(() => {
  received = [];
  connections = 0;
});

afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.closeAll()));
});

async function services(smtp: Record<string, unknown> | null = {}): Promise<TestServices> {
  const dir = await tempDir('organism-mail-');
  const sections =
    smtp === null
      ? {}
      : {
          smtp: {
            host: '127.0.0.1',
            port,
            secure: false,
            user: USER,
            password_env: PASSWORD_ENV,
            from: 'Organism <organism@example.test>',
            ...smtp,
          },
        };
  const s = testServices(configIn(dir, sections));
  opened.push(s);
  return s;
}

/** Headers of a raw RFC 5322 message, unfolded, by lower-case name; and its body. */
function parse(raw: string): { headers: Map<string, string>; body: string } {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const headers = new Map<string, string>();
  for (const line of head.split('\r\n')) {
    const colon = line.indexOf(':');
    headers.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim());
  }
  return { headers, body: raw.slice(split + 4) };
}

describe('send_email', () => {
  it('delivers a plain-text mail: envelope, headers and body arrive as sent', async () => {
    const svc = await services();
    const result = await sendEmail.run(
      {
        to: ['ada@example.com', 'Charles Babbage <charles@example.org>'],
        cc: 'grace@example.net',
        reply_to: 'replies@example.com',
        subject: 'Weekly report 42',
        body: 'Hello Ada,\nthe engine works.\n\n-- organism',
      },
      toolContext(svc, { callId: 'call-abc-123' }),
    );
    expect(result.accepted.sort()).toEqual(['ada@example.com', 'charles@example.org', 'grace@example.net']);
    expect(result.rejected).toEqual([]);
    expect(received).toHaveLength(1);
    const mail = received[0]!;
    expect(mail.from).toBe('organism@example.test');
    expect(mail.to.sort()).toEqual(['ada@example.com', 'charles@example.org', 'grace@example.net']);
    const { headers, body } = parse(mail.raw);
    expect(headers.get('from')).toBe('Organism <organism@example.test>');
    expect(headers.get('to')).toBe('ada@example.com, Charles Babbage <charles@example.org>');
    expect(headers.get('cc')).toBe('grace@example.net');
    expect(headers.get('reply-to')).toBe('replies@example.com');
    expect(headers.get('subject')).toBe('Weekly report 42');
    expect(headers.get('content-type')).toMatch(/^text\/plain/);
    expect(headers.get('message-id')).toBe(result.message_id);
    expect(result.message_id).toBe('<call-abc-123.organism@example.test>');
    expect(body.replace(/\r\n/g, '\n').trimEnd()).toBe('Hello Ada,\nthe engine works.\n\n-- organism');
  });

  it('sends body as HTML when html is true', async () => {
    const svc = await services();
    await sendEmail.run(
      { to: 'ada@example.com', subject: 'Formatted', body: '<p>Hello <b>Ada</b></p>', html: true },
      toolContext(svc),
    );
    const { headers, body } = parse(received[0]!.raw);
    expect(headers.get('content-type')).toMatch(/^text\/html/);
    expect(body.trim()).toBe('<p>Hello <b>Ada</b></p>');
    expect(headers.get('cc')).toBeUndefined();
  });

  it('reports recipients the server refused while delivering to the others', async () => {
    const svc = await services();
    const result = await sendEmail.run(
      { to: ['ada@example.com', 'nobody@blocked.example'], subject: 'Partly', body: 'x' },
      toolContext(svc),
    );
    expect(result.accepted).toEqual(['ada@example.com']);
    expect(result.rejected).toEqual(['nobody@blocked.example']);
    expect(received[0]!.to).toEqual(['ada@example.com']);
  });

  it('fails with mail.rejected when the server refuses every recipient', async () => {
    const svc = await services();
    await expect(
      sendEmail.run({ to: 'nobody@blocked.example', subject: 'None', body: 'x' }, toolContext(svc)),
    ).rejects.toMatchObject({ code: 'mail.rejected', message: expect.stringContaining(`127.0.0.1:${port}`) });
    expect(received).toHaveLength(0);
  });

  it('refuses CR/LF header injection in every header field, and nothing reaches the server', async () => {
    const svc = await services();
    const base = { to: 'ada@example.com', subject: 'Fine', body: 'x' };
    const attacks = [
      { ...base, subject: 'Hi\r\nBcc: victim@evil.example' },
      { ...base, subject: 'Hi\nBcc: victim@evil.example' },
      { ...base, subject: 'Hi\rBcc: victim@evil.example' },
      { ...base, to: 'ada@example.com\r\nBcc: victim@evil.example' },
      { ...base, to: ['ok@example.com', 'ada@example.com\nBcc: victim@evil.example'] },
      { ...base, cc: 'grace@example.net\r\nBcc: victim@evil.example' },
      { ...base, reply_to: 'r@example.com\r\nBcc: victim@evil.example' },
    ];
    for (const args of attacks) {
      await expect(sendEmail.run(args, toolContext(svc)), JSON.stringify(args)).rejects.toMatchObject({
        code: 'mail.header_injection',
        message: expect.stringMatching(/line break/),
      });
    }
    expect(connections).toBe(0);
    expect(received).toHaveLength(0);
    // A line break in the body is ordinary text, of course.
    await sendEmail.run({ ...base, body: 'line one\r\nline two' }, toolContext(svc));
    expect(received).toHaveLength(1);
  });

  it('refuses entries that are not exactly one address, and too many recipients', async () => {
    const svc = await services();
    const bad = [
      'not-an-address',
      'a@example.com, b@example.com',
      'a@example.com; b@example.com',
      'two@x.example three@y.example',
      'Ada <ada@example.com>, b@example.com',
      'Ada <ada@example.com> trailing',
      '<>',
      '',
    ];
    for (const to of bad) {
      await expect(
        sendEmail.run({ to, subject: 's', body: 'b' }, toolContext(svc)),
        to,
      ).rejects.toMatchObject({
        code: 'mail.invalid_address',
      });
    }
    expect(parseAddress('to', '"Babbage, Charles" <charles@example.org>')).toEqual({
      name: 'Babbage, Charles',
      address: 'charles@example.org',
    });
    expect(parseAddress('to', ' <ada@example.com> ')).toEqual({ name: '', address: 'ada@example.com' });
    const to = Array.from({ length: 4 }, (_, i) => `r${i}@example.com`);
    await expect(
      sendEmail.run(
        { to, cc: 'c@example.com', subject: 's', body: 'b' },
        toolContext(svc, { config: { max_recipients: 4 } }),
      ),
    ).rejects.toMatchObject({ code: 'mail.too_many_recipients' });
    expect(connections).toBe(0);
  });

  it('sends nothing when the call is already aborted (timeout or shutdown)', async () => {
    const svc = await services();
    const controller = new AbortController();
    controller.abort(new Error('timed out'));
    await expect(
      sendEmail.run(
        { to: 'ada@example.com', subject: 's', body: 'b' },
        toolContext(svc, { signal: controller.signal }),
      ),
    ).rejects.toThrow('timed out');
    expect(connections).toBe(0);
  });

  it('fails with mail.auth on a wrong password and never shows the password', async () => {
    const svc = await services({ password_env: 'ORGANISM_TEST_SMTP_WRONG' });
    process.env.ORGANISM_TEST_SMTP_WRONG = 'wrong-secret-value';
    try {
      const err = await sendEmail
        .run({ to: 'ada@example.com', subject: 's', body: 'b' }, toolContext(svc))
        .then(
          () => undefined,
          (e: Error & { code?: string }) => e,
        );
      expect(err?.code).toBe('mail.auth');
      expect(err?.message).toContain(`127.0.0.1:${port}`);
      expect(JSON.stringify({ m: err?.message, e: err })).not.toContain('wrong-secret-value');
      expect(received).toHaveLength(0);
    } finally {
      delete process.env.ORGANISM_TEST_SMTP_WRONG;
    }
  });

  it('fails with mail.connection naming host:port when the server is down', async () => {
    const probe = net.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const downPort = (probe.address() as net.AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const svc = await services({ port: downPort });
    const err = await sendEmail
      .run({ to: 'ada@example.com', subject: 's', body: 'b' }, toolContext(svc))
      .then(
        () => undefined,
        (e: Error & { code?: string }) => e,
      );
    expect(err?.code).toBe('mail.connection');
    expect(err?.message).toContain(`127.0.0.1:${downPort}`);
    expect(err?.message).not.toContain(PASSWORD);
  });

  it('says why it is unavailable: no smtp section, or the password variable unset', async () => {
    const none = await services(null);
    expect(sendEmail.unavailable!(none)).toBe('no smtp section in organism.yaml');
    await expect(
      sendEmail.run({ to: 'ada@example.com', subject: 's', body: 'b' }, toolContext(none)),
    ).rejects.toMatchObject({ code: 'mail.not_configured' });
    const unset = await services({ password_env: 'ORGANISM_TEST_SMTP_UNSET' });
    expect(sendEmail.unavailable!(unset)).toBe(
      'smtp.password_env names ORGANISM_TEST_SMTP_UNSET, which is not set in the environment',
    );
    expect(sendEmail.unavailable!(await services({ from: 'not an address' }))).toBe(
      'smtp.from in organism.yaml is not one e-mail address: "not an address"',
    );
    expect(sendEmail.unavailable!(await services())).toBeNull();
  });

  it('declares capability send_email, the email guard and a side effect; its args schema checks shape', () => {
    expect(sendEmail).toMatchObject({
      name: 'send_email',
      capability: 'send_email',
      guard: 'email',
      sideEffect: true,
      readOnly: false,
      source: 'native',
    });
    const ajv = new Ajv2020({ strict: true, strictTypes: false, allowUnionTypes: true, useDefaults: true });
    const valid = (args: unknown) => ajv.validate(sendEmail.args, args);
    expect(valid({ to: 'a@b.example', subject: 's', body: 'b' })).toBe(true);
    expect(valid({ to: ['a@b.example'], cc: ['c@d.example'], subject: 's', body: 'b', html: true })).toBe(
      true,
    );
    expect(valid({ to: [], subject: 's', body: 'b' })).toBe(false);
    expect(valid({ to: 'a@b.example', body: 'b' })).toBe(false);
    expect(valid({ to: 'a@b.example', subject: 's', body: 'b', bcc: 'x@y.example' })).toBe(false);
    expect(ajv.validateSchema(sendEmail.config!)).toBe(true);
  });
});
