/**
 * Listeners and tools declared with zod (a Standard Schema), run by the real daemon: zod checks the
 * payload and the tool's arguments (its messages, every field), what zod gives back (defaults
 * filled) is what the handler and the tool get, and zod's JSON Schema form is what the XML codec,
 * `organism describe` and the MCP tool definitions read. A Standard Schema with no JSON Schema form
 * is refused at start, naming the listener and what to do.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DaemonProcess, runCli } from '../helpers/daemon.ts';
import { AUTH_YAML, call, OPERATOR_TOKEN, organismDir, startOn, TOKENS_ENV } from '../server/helpers.ts';

const SUPPORT = fileURLToPath(new URL('./standard-schema-support/', import.meta.url));

const YAML = `organism:
  name: zod-orders
${AUTH_YAML}tool_modules: [${SUPPORT}price.ts]
listeners:
  - name: order
    handler: ${SUPPORT}order.ts
    tools: [price]
`;

describe('zod schemas in a listener and a tool, with the real daemon', () => {
  let daemon: DaemonProcess;
  let file: string;
  const order = (payload: string) =>
    call(daemon.url, '/api/v1/call', {
      method: 'POST',
      body: { to: 'order', payload },
      token: OPERATOR_TOKEN,
    });

  beforeAll(async () => {
    ({ file } = await organismDir(YAML));
    daemon = await startOn(file, TOKENS_ENV);
  });
  afterAll(async () => {
    await daemon?.stop();
  });

  it("the handler and the tool get zod's output: defaults filled, numbers decoded by the JSON Schema form", async () => {
    const r = await order('<order><item>pen</item><qty>3</qty></order>');
    expect(r.status).toBe(200);
    // note: zod's default in the payload; currency: zod's default in the tool's arguments.
    expect(r.json.reply).toMatchObject({
      tag: 'order-quote',
      payload: { item: 'pen', total: 4.5, currency: 'EUR', note: 'none' },
    });
  });

  it("a payload zod refuses is a 422 that lists every field zod named, in zod's words", async () => {
    const r = await order('<order><item></item><qty>0</qty><code>abc</code></order>');
    expect(r.status).toBe(422);
    expect(r.json.error.code).toBe('payload.invalid');
    const message: string = r.json.error.message;
    expect(message).toContain('<order> field "item": Too small: expected string to have >=1 characters');
    expect(message).toContain('field "qty": Too small: expected number to be >=1');
    expect(message).toContain('field "code": Invalid string: must match pattern');
    expect(r.json.huh).toContain('<reason>validate</reason>');
  });

  it("arguments zod refuses are the tool call's InvalidArguments refusal, naming the field; the tool does not run", async () => {
    const r = await order('<order><item>bad-args</item><qty>1</qty></order>');
    expect(r.status).toBe(502);
    expect(r.json.error.message).toContain('invalid arguments for price: field "item": Invalid input');
    expect(r.json.error.message).toContain('field "qty": Too small');
  });

  it("organism describe reads zod's JSON Schema form: the fields, their bounds and descriptions", async () => {
    const { code, stdout, stderr } = await runCli(['describe', 'order', '--config', file]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain('# order: <order>');
    expect(stdout).toMatch(/<xs:element name="item"/);
    expect(stdout).toMatch(/<xs:element name="note"[^>]*minOccurs="0"/);
    expect(stdout).toContain('What to price.');
    // zod's safe-integer bounds are not shown as if they were the schema's own.
    expect(stdout).not.toContain('9007199254740991');
  });

  it('organism tools call runs the zod tool with its defaults filled, and refuses what zod refuses', async () => {
    const ok = await runCli([
      'tools',
      'call',
      'price',
      '--as',
      'order',
      '--args',
      '{"item":"ink","qty":2}',
      '--config',
      file,
    ]);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ status: 'ok', value: { total: 3, currency: 'EUR' } });
    const bad = await runCli([
      'tools',
      'call',
      'price',
      '--as',
      'order',
      '--args',
      '{"item":"ink","qty":2,"currency":"GBP"}',
      '--config',
      file,
    ]);
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.stdout).error).toEqual({
      code: 'InvalidArguments',
      message: 'invalid arguments for price: field "currency": Invalid option: expected one of "EUR"|"USD"',
    });
  });
});

describe('a Standard Schema without a JSON Schema form', () => {
  it('is refused at start, naming the listener, the library and what to do', async () => {
    const { file } = await organismDir(
      `organism:\n  name: formless\nlisteners:\n  - name: formless\n    handler: ${SUPPORT}formless.ts\n`,
    );
    const { code, stdout, stderr } = await runCli(['validate', '--config', file]);
    expect(code).not.toBe(0);
    const out = stdout + stderr;
    expect(out).toContain('payload <formless> of listener formless: its acme schema has no JSON Schema form');
    expect(out).toContain("registerJsonSchemaAdapter({ vendor: 'acme', toJsonSchema })");
  });

  it('a module that names its listener is refused under another name, at the line of that name', async () => {
    const { file } = await organismDir(
      `organism:\n  name: renamed\ntool_modules: [${SUPPORT}price.ts]\nlisteners:\n  - name: orders\n    handler: ${SUPPORT}order.ts\n    tools: [price]\n`,
    );
    const { code, stdout, stderr } = await runCli(['validate', '--config', file]);
    expect(code).toBe(1);
    expect(stdout + stderr).toContain(
      `organism.yaml:5:11: listeners[0].name: the module ${SUPPORT}order.ts is the listener 'order' (defineListener's name), not 'orders'`,
    );
  });
});
