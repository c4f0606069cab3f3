/**
 * Rich tool results over /mcp (issue 27: images, audio, embedded resources) under the bounds and
 * redaction every other result has, with the real daemon and the SDK's Client on 127.0.0.1: an own
 * tool returning a 3 MB image reaches the client cut to max_result_bytes (described, not inlined),
 * and a secret the daemon knows in a text block or an embedded resource's text reaches it redacted.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DaemonProcess, startDaemonProcess } from '../helpers/daemon.ts';
import { OPERATOR_TOKEN, REPO, tempOrganism, VIEWER_TOKEN } from '../mcp/helpers.ts';

/** A secret the daemon knows (an admin token, by token_env). */
const SECRET = 'sk-content-Hq7Lm2Vx9Tz4Rb8N';
let daemon: DaemonProcess;
let client: Client;

beforeAll(async () => {
  const organism = await tempOrganism(`auth:
  tokens:
    - { name: ops, role: operator, token_env: MCP_OPS_TOKEN }
    - { name: watcher, role: viewer, token_env: MCP_VIEW_TOKEN }
    - { name: root, role: admin, token_env: MCP_ROOT_TOKEN }
tool_modules:
  - ./tools
mcp:
  tools: [huge_image, telling_content]
listeners:
  - name: upper
    handler: ${JSON.stringify(`${REPO}test/mcp/fixtures/upper.ts`)}
`);
  await mkdir(join(organism.dir, 'tools'));
  await writeFile(
    join(organism.dir, 'tools', 'media.ts'),
    `import { defineTool, imageContent, resourceContent, textContent, toolContent } from ${JSON.stringify(join(REPO, 'src/index.ts'))};
const common = { args: { type: 'object', properties: {}, additionalProperties: false }, readOnly: true, capability: 'read', source: 'native' } as const;
export default [
  defineTool({ ...common, name: 'huge_image', description: 'A 3 MB image.',
    run: async () => toolContent([textContent('a big picture'), imageContent(Buffer.alloc(3_000_000, 7), 'image/png')]) }),
  defineTool({ ...common, name: 'telling_content', description: 'Says a secret it read.',
    run: async () => toolContent([
      textContent('the token is ' + process.env.MCP_ROOT_TOKEN),
      resourceContent({ uri: 'note://x', mimeType: 'text/plain', text: 'also ' + process.env.MCP_ROOT_TOKEN }),
    ]) }),
];
`,
  );
  daemon = await startDaemonProcess(['--config', organism.config], {
    MCP_OPS_TOKEN: OPERATOR_TOKEN,
    MCP_VIEW_TOKEN: VIEWER_TOKEN,
    MCP_ROOT_TOKEN: SECRET,
  });
  client = new Client({ name: 'attack', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${daemon.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } },
    }),
  );
}, 30_000);
afterAll(async () => {
  await client?.close();
  await daemon?.stop();
});

describe('rich tool results, attacked', () => {
  it('a 3 MB image reaches the client cut to max_result_bytes, not inlined', async () => {
    const result = await client.callTool({ name: 'huge_image', arguments: {} });
    const text = JSON.stringify(result);
    expect(text.length).toBeLessThan(102_400);
    expect(text).toContain('[image image/png, 3.0 MB]');
    expect(text).toContain('[truncated: result was 4000103 bytes of JSON, limit 102400]');
    expect(daemon.child.exitCode).toBeNull();
  });

  it("a known secret in a text block or an embedded resource's text is redacted", async () => {
    const result = await client.callTool({ name: 'telling_content', arguments: {} });
    const text = JSON.stringify(result);
    expect(text).toContain('the token is');
    expect(text).toContain('note://x');
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain('Hq7Lm2Vx9Tz4Rb8N');
  });
});
