import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The real daemon (`organism run`) serving this folder's organism.yaml, and the MCP SDK's own client
// talking to it over Streamable HTTP, as Claude Desktop, an IDE or an agent framework would.

const CONFIG = fileURLToPath(new URL('../organism.yaml', import.meta.url));
/** The organism CLI of the installed package (of this repository, from its checkout). */
const BIN = join(
  dirname(createRequire(import.meta.url).resolve('organism/package.json')),
  'bin',
  'organism.js',
);

let daemon: ChildProcess;
let dataDir: string;
let client: Client;

/** Starts the daemon on a free port with its data in a temp folder; resolves with its address. */
function start(): Promise<string> {
  daemon = spawn(process.execPath, [BIN, 'run', '--config', CONFIG, '--port', '0'], {
    env: { ...process.env, ORGANISM_DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  return new Promise((resolve, reject) => {
    daemon.once('exit', (code) => reject(new Error(`the daemon exited ${code}:\n${out}`)));
    const look = (chunk: Buffer) => {
      out += chunk;
      const url = /listening on (http:\/\/[^\s"]+)/.exec(out)?.[1];
      if (url) resolve(url);
    };
    daemon.stdout!.on('data', look);
    daemon.stderr!.on('data', look);
  });
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'helpdesk-'));
  const url = await start();
  // On the daemon's machine its local token (admin) is in the data dir; elsewhere, a token of
  // auth.tokens with the operator role (tools/call needs it).
  const token = (await readFile(join(dataDir, 'api-token'), 'utf8')).trim();
  client = new Client({ name: 'helpdesk-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
}, 60_000);

afterAll(async () => {
  await client?.close();
  if (daemon && daemon.exitCode === null) {
    const exited = new Promise((resolve) => daemon.once('exit', resolve));
    daemon.kill('SIGTERM');
    await exited;
  }
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
}, 30_000);

/** The JSON a tool answered with, from its text block. */
const json = (result: Awaited<ReturnType<Client['callTool']>>) =>
  JSON.parse((result.content as Array<{ type: string; text: string }>)[0]!.text);

describe('the help desk over MCP', () => {
  it('lists the own tool and the listener offered as a tool', async () => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['kb_search', 'file_ticket']));
    const search = tools.find((t) => t.name === 'kb_search')!;
    expect(search.inputSchema.properties).toHaveProperty('query');
    expect(search.annotations?.readOnlyHint).toBe(true);
  });

  it('kb_search finds an article, and the article reads as a resource', async () => {
    const found = await client.callTool({ name: 'kb_search', arguments: { query: 'reset password' } });
    expect(found.isError).toBeFalsy();
    const { articles } = json(found);
    expect(articles[0]).toEqual({
      id: 'reset-password',
      title: 'Resetting your password',
      uri: 'kb://articles/reset-password',
    });
    const read = await client.readResource({ uri: articles[0].uri });
    expect(read.contents[0]).toMatchObject({
      uri: 'kb://articles/reset-password',
      mimeType: 'text/markdown',
    });
    expect(read.contents[0]).toMatchObject({ text: expect.stringContaining('# Resetting your password') });
    const { completion } = await client.complete({
      ref: { type: 'ref/resource', uri: 'kb://articles/{id}' },
      argument: { name: 'id', value: 'ex' },
    });
    expect(completion.values).toEqual(['export-data']);
  });

  it('a call with bad arguments comes back as a tool error that says what was wrong', async () => {
    const refused = await client.callTool({ name: 'kb_search', arguments: { query: '' } });
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toContain('query');
  });

  it('gets the prompt with its arguments', async () => {
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toContain('answer_customer');
    const prompt = await client.getPrompt({
      name: 'answer_customer',
      arguments: { question: 'How do I export my data?', tone: 'formal' },
    });
    expect(prompt.messages[0]?.content).toMatchObject({ type: 'text' });
    expect(JSON.stringify(prompt.messages)).toContain('formal tone');
    expect(JSON.stringify(prompt.messages)).toContain('How do I export my data?');
  });

  it('file_ticket runs the listener in a thread and answers with its reply', async () => {
    const filed = await client.callTool({
      name: 'file_ticket',
      arguments: { subject: 'The export email never came', body: 'Waited an hour.' },
    });
    expect(filed.isError).toBeFalsy();
    expect(filed.structuredContent).toMatchObject({ status: 'replied' });
    const { thread, reply } = filed.structuredContent as { thread: string; reply: string };
    expect(reply).toBe(`<ticket-filed><id>T-${thread.slice(0, 8)}</id></ticket-filed>`);
  });
});
