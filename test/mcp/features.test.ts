/**
 * What an organism project offers MCP clients from its own code, on the real daemon over /mcp with
 * the SDK's Client: own tools returning content blocks (image, audio, embedded resource, link) built
 * with the package's helpers, the same through the API, the thread history's text form; prompts
 * (an agent's and the project's) and resources (fixed, binary, templates) from its own modules;
 * completion; and the errors for unknown names, bad arguments and bad template variables.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DaemonProcess, REPO_ROOT, runCli, startDaemonProcess } from '../helpers/daemon.ts';
import { PNG, SCHEMA_2020_12 } from './features-support/tools/media.ts';

const SUPPORT = join(REPO_ROOT, 'test/mcp/features-support');
const SECRET = 'media-secret-0123456789abcdef';

let daemon: DaemonProcess;
let client: Client;

beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'organism-mcp-features-'));
  const config = join(dir, 'organism.yaml');
  await writeFile(
    config,
    `organism:
  name: mcp-features
  description: "keeps \${MEDIA_SECRET} to itself"
  data_dir: ./data
  workspace: ./workspace
tool_modules: [${JSON.stringify(join(SUPPORT, 'tools'))}]
prompt_modules: [${JSON.stringify(join(SUPPORT, 'prompts'))}]
resource_modules: [${JSON.stringify(join(SUPPORT, 'resources/items.ts'))}]
llm:
  backends:
    - { provider: scripted, script: ./script.yaml }
mcp:
  tools: [media_image, media_mixed, media_big, media_broken, contact]
  tool_config:
    media_big: { max_result_bytes: 4096 }
listeners:
  - name: reviewer
    agent: true
    description: reviews code
    prompt: You review code carefully.
    mcp: true
  - name: quiet
    agent: true
    description: not offered over MCP
    prompt: Secret instructions.
`,
  );
  await writeFile(join(dir, 'script.yaml'), 'name: none\nscripts:\n  - turns:\n      - text: ok\n');
  daemon = await startDaemonProcess(['--config', config], { MEDIA_SECRET: SECRET });
  client = new Client({ name: 'features-test', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${daemon.url}/mcp`), {
      requestInit: { headers: daemon.headers() },
    }),
  );
}, 60_000);

afterAll(async () => {
  await client?.close();
  await daemon?.stop();
});

const text = (blocks: unknown) => JSON.stringify(blocks);

describe('own tools returning content blocks', () => {
  it('an image comes to the MCP client as an image block with its bytes', async () => {
    const result = await client.callTool({ name: 'media_image', arguments: {} });
    expect(result.isError).toBe(false);
    expect(result.content).toEqual([{ type: 'image', data: PNG.toString('base64'), mimeType: 'image/png' }]);
    // No plain value given: no structuredContent.
    expect(result.structuredContent).toBeUndefined();
  });

  it('text, audio, an embedded resource and a link in order, the value as structuredContent, text redacted', async () => {
    const result = await client.callTool({ name: 'media_mixed', arguments: {} });
    expect(result.content).toEqual([
      { type: 'text', text: 'the key is [REDACTED]' },
      {
        type: 'audio',
        data: Buffer.from([82, 73, 70, 70, 0, 0, 0, 0]).toString('base64'),
        mimeType: 'audio/wav',
      },
      { type: 'resource', resource: { uri: 'test://doc', mimeType: 'application/json', text: '{"a":1}' } },
      { type: 'resource_link', uri: 'test://static-text', name: 'static text' },
    ]);
    expect(result.structuredContent).toEqual({ result: { count: 4 } });
  });

  it('over max_result_bytes (counted by the encoded size) the result is its text form, cut, and says so', async () => {
    const result = await client.callTool({ name: 'media_big', arguments: {} });
    expect(result.isError).toBe(false);
    const shown = text(result.content);
    expect(shown).toContain('big one');
    expect(shown).toContain('[image image/png, 65.5 kB]');
    expect(shown).toMatch(/truncated: result was \d+ bytes of JSON, limit 4096/);
    expect(shown).not.toContain('AAAAAAAA');
  });

  it('blocks that are not well formed are a tool error naming the block', async () => {
    const result = await client.callTool({ name: 'media_broken', arguments: {} });
    expect(result.isError).toBe(true);
    expect(text(result.content)).toContain('InvalidContent');
    expect(text(result.content)).toContain('content[0].data is not base64');
  });

  it('organism tools call prints the content as JSON (the image as base64), exit 0', async () => {
    const ran = await runCli(['tools', 'call', 'media_image', '--as', 'mcp', '--url', daemon.url]);
    expect(ran.code, ran.stderr).toBe(0);
    expect(JSON.parse(ran.stdout)).toMatchObject({
      status: 'ok',
      value: { '~content': [{ type: 'image', mimeType: 'image/png', data: PNG.toString('base64') }] },
    });
  });

  it('through the API the result is the content as JSON; the thread history keeps the text form', async () => {
    const response = await fetch(`${daemon.url}/api/v1/tools/media_mixed/call`, {
      method: 'POST',
      headers: daemon.headers({ 'content-type': 'application/json' }),
      body: JSON.stringify({ as: 'mcp', args: {} }),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { thread: string; result: { status: string; value: unknown } };
    expect(body.result.status).toBe('ok');
    expect(body.result.value).toMatchObject({
      '~content': [
        { type: 'text', text: 'the key is [REDACTED]' },
        { type: 'audio', mimeType: 'audio/wav' },
        { type: 'resource' },
        { type: 'resource_link' },
      ],
      value: { count: 4 },
    });
    const thread = (await (
      await fetch(`${daemon.url}/api/v1/threads/${body.thread}`, { headers: daemon.headers() })
    ).json()) as { messages: Array<{ kind: string; payload: string }> };
    const recorded = thread.messages.find((m) => m.kind === 'tool-result')?.payload ?? '';
    expect(recorded).toContain('[audio audio/wav, 8 B]');
    expect(recorded).not.toContain(Buffer.from([82, 73, 70, 70, 0, 0, 0, 0]).toString('base64'));
    expect(recorded).not.toContain(SECRET);
  });
});

describe('JSON Schema 2020-12 input schemas', () => {
  it("tools/list gives an own tool's 2020-12 schema intact, and calls are checked by it", async () => {
    const { tools } = await client.listTools();
    expect(tools.find((t) => t.name === 'contact')?.inputSchema).toEqual(SCHEMA_2020_12);
    const ok = await client.callTool({ name: 'contact', arguments: { contactMethod: 'phone', phone: '1' } });
    expect(ok.isError).toBe(false);
    // if/then: contactMethod phone needs phone; additionalProperties: false; $ref into $defs.
    for (const args of [
      { contactMethod: 'phone', email: 'a@b' },
      { email: 'a@b', extra: 1 },
      { email: 'a@b', address: { city: 1 } },
    ]) {
      const refused = await client.callTool({ name: 'contact', arguments: args });
      expect(refused.isError, JSON.stringify(args)).toBe(true);
      expect(text(refused.content)).toContain('InvalidArguments');
    }
  });
});

describe('prompts', () => {
  it("lists the offered agent's prompt and the project's, not an agent that is not offered", async () => {
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(['reviewer', 'review', 'picture', 'broken', 'throws']);
    expect(prompts.find((p) => p.name === 'review')?.arguments).toEqual([
      { name: 'language', description: 'The language', required: true },
      { name: 'focus', description: 'What to look at', required: false },
    ]);
    expect(prompts.find((p) => p.name === 'reviewer')?.arguments?.length).toBeGreaterThan(0);
  });

  it("an agent's prompt is its role and a task built from the arguments", async () => {
    const { prompts } = await client.listPrompts();
    const reviewer = prompts.find((p) => p.name === 'reviewer')!;
    const args = Object.fromEntries((reviewer.arguments ?? []).map((a) => [a.name, 'check main.ts']));
    const got = await client.getPrompt({ name: 'reviewer', arguments: args });
    const shown = text(got.messages);
    expect(shown).toContain('You review code carefully.');
    expect(shown).toContain('check main.ts');
    await expect(client.getPrompt({ name: 'quiet' })).rejects.toThrow(/no prompt named quiet/);
  });

  it("a project's prompt fills its arguments; image and embedded resource messages come as blocks", async () => {
    const got = await client.getPrompt({
      name: 'review',
      arguments: { language: 'rust', focus: 'lifetimes' },
    });
    expect(got.messages).toEqual([
      { role: 'user', content: { type: 'text', text: 'Review this rust code, looking at lifetimes.' } },
    ]);
    const picture = await client.getPrompt({ name: 'picture' });
    expect(picture.messages.map((m) => m.content.type)).toEqual(['image', 'resource', 'text']);
    expect(picture.messages[0]?.content).toMatchObject({
      data: PNG.toString('base64'),
      mimeType: 'image/png',
    });
  });

  it('argument checks and failures are errors that say what was wrong', async () => {
    await expect(client.getPrompt({ name: 'review' })).rejects.toThrow(/needs the argument language/);
    await expect(
      client.getPrompt({ name: 'review', arguments: { language: 'x', tone: 'y' } }),
    ).rejects.toThrow(/has no argument tone \(it takes language, focus\)/);
    await expect(client.getPrompt({ name: 'nope' })).rejects.toMatchObject({ code: -32602 });
    await expect(client.getPrompt({ name: 'broken' })).rejects.toThrow(
      /prompt broken returned messages\[0\]\.role "system"/,
    );
    await expect(client.getPrompt({ name: 'throws' })).rejects.toThrow(
      /prompt throws failed: the prompt could not be built/,
    );
    // The daemon goes on.
    expect(
      (await client.getPrompt({ name: 'review', arguments: { language: 'ruby' } })).messages,
    ).toHaveLength(1);
  });
});

describe('resources', () => {
  it('lists the fixed resources and the threads; templates: listeners, threads and the project’s', async () => {
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual(
      expect.arrayContaining(['test://static-text', 'test://static-binary', 'test://huge']),
    );
    expect(resources.every((r) => typeof r.name === 'string')).toBe(true);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual([
      'organism://listeners/{name}',
      'organism://threads/{id}',
      'test://items/{id}/data',
    ]);
  });

  it('reads text, binary and a template with its variable', async () => {
    expect((await client.readResource({ uri: 'test://static-text' })).contents).toEqual([
      {
        uri: 'test://static-text',
        mimeType: 'text/plain',
        text: 'This is the content of the static text resource.',
      },
    ]);
    expect((await client.readResource({ uri: 'test://static-binary' })).contents).toEqual([
      { uri: 'test://static-binary', mimeType: 'image/png', blob: PNG.toString('base64') },
    ]);
    const item = await client.readResource({ uri: 'test://items/123/data' });
    expect(item.contents).toEqual([
      {
        uri: 'test://items/123/data',
        mimeType: 'application/json',
        text: '{"id":"123","data":"Data for ID: 123"}',
      },
    ]);
    const listener = await client.readResource({ uri: 'organism://listeners/reviewer' });
    expect(JSON.parse((listener.contents[0] as { text: string }).text)).toMatchObject({
      name: 'reviewer',
      kind: 'agent',
    });
  });

  it('unknown URIs, empty and refused template variables are errors with the URI', async () => {
    await expect(client.readResource({ uri: 'test://nothing' })).rejects.toMatchObject({
      code: -32602,
      data: { uri: 'test://nothing' },
    });
    await expect(client.readResource({ uri: 'test://items//data' })).rejects.toThrow(
      /Resource not found: test:\/\/items\/\/data \(no resource has that URI; templates: test:\/\/items\/\{id\}\/data; every \{variable\} must be non-empty\)/,
    );
    await expect(client.readResource({ uri: 'test://items/abc/data' })).rejects.toThrow(
      /resource item failed: item id must be digits, got abc/,
    );
    // 7 MiB of bytes is over 8 MiB as base64: the request's error, and the daemon goes on.
    await expect(client.readResource({ uri: 'test://huge' })).rejects.toThrow(
      /resource huge answered \d+ bytes, over the 8388608-byte bound of a prompt or resource/,
    );
    await expect(client.readResource({ uri: 'organism://listeners/quiet' })).rejects.toMatchObject({
      code: -32602,
    });
    await expect(client.readResource({ uri: 'organism://threads/none' })).rejects.toMatchObject({
      code: -32602,
    });
  });
});

describe('a resource that says it changed', () => {
  it('a subscribed client is told notifications/resources/updated for its URI', async () => {
    const updated: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updated.push(n.params.uri);
    });
    await client.subscribeResource({ uri: 'test://watched' });
    const deadline = Date.now() + 5000;
    while (updated.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(updated[0]).toBe('test://watched');
    await client.unsubscribeResource({ uri: 'test://watched' });
  });
});

describe('completion', () => {
  it("completes a project prompt's argument, a template's variable, listener names and thread ids", async () => {
    const prompt = await client.complete({
      ref: { type: 'ref/prompt', name: 'review' },
      argument: { name: 'language', value: 'r' },
    });
    expect(prompt.completion.values).toEqual(['rust', 'ruby']);
    const item = await client.complete({
      ref: { type: 'ref/resource', uri: 'test://items/{id}/data' },
      argument: { name: 'id', value: '10' },
    });
    expect(item.completion.values).toEqual(['100', '101']);
    const listeners = await client.complete({
      ref: { type: 'ref/resource', uri: 'organism://listeners/{name}' },
      argument: { name: 'name', value: '' },
    });
    expect(listeners.completion.values).toEqual(['reviewer']);
    const call = await client.callTool({ name: 'media_image', arguments: {} });
    expect(call.isError).toBe(false);
    const { resources } = await client.listResources();
    const thread = resources.find((r) => r.uri.startsWith('organism://threads/'))?.uri.slice(19);
    expect(thread).toBeDefined();
    const threads = await client.complete({
      ref: { type: 'ref/resource', uri: 'organism://threads/{id}' },
      argument: { name: 'id', value: thread!.slice(0, 6) },
    });
    expect(threads.completion.values).toContain(thread);
  });

  it('an argument nobody completes has no values; an unknown prompt is an error', async () => {
    const none = await client.complete({
      ref: { type: 'ref/prompt', name: 'review' },
      argument: { name: 'focus', value: 'x' },
    });
    expect(none.completion.values).toEqual([]);
    await expect(
      client.complete({ ref: { type: 'ref/prompt', name: 'nope' }, argument: { name: 'a', value: '' } }),
    ).rejects.toMatchObject({ code: -32602 });
  });
});
