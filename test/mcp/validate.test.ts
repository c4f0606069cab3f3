/** `organism validate` on mcp_servers and MCP grants: checked without starting any server. */
import { describe, expect, it } from 'vitest';
import { captureIo } from '../../src/cli/io.ts';
import { main } from '../../src/cli/main.ts';
import { organismSchema } from '../../src/config/schema.ts';
import type { JsonSchema } from '../../src/xml/json-schema.ts';
import { tempOrganism } from './helpers.ts';

async function validate(yaml: string) {
  const o = await tempOrganism(yaml);
  const io = captureIo();
  const code = await main(['validate', o.config], io);
  return { code, out: io.stdout.join('\n'), err: io.stderr.join('\n') };
}

describe('organism validate with MCP', () => {
  it('accepts grants and tool_config of a configured server without starting it', async () => {
    const r = await validate(`mcp_servers:
  - name: fs
    command: /nonexistent/never-started
    guards: { read_file: file }
listeners:
  - name: reader
    agent: true
    description: reads
    tools: [fs.read_file]
    tool_config:
      fs.read_file: { trusted: true, allowed_paths: [notes/**] }
`);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
  });

  it('names a server with both command and url, and a duplicate name', async () => {
    const r = await validate(`mcp_servers:
  - name: fs
    command: /bin/true
    url: http://127.0.0.1:1/mcp
  - name: fs
    url: http://127.0.0.1:1/mcp
`);
    expect(r.code).toBe(1);
    expect(r.err).toContain('exactly one of command (stdio) or url');
    expect(r.err).toContain("duplicate MCP server name 'fs'");
  });

  it('names a grant of an unknown server and a bad tool_config value of an MCP tool', async () => {
    const r = await validate(`mcp_servers:
  - name: fs
    command: /bin/true
listeners:
  - name: reader
    agent: true
    description: reads
    tools: [fz.read_file, fs.read_file]
    tool_config:
      fs.read_file: { trusted: yes-please }
`);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/unknown tool "fz\.read_file"/);
    expect(r.err).toMatch(/tool_config\.fs\.read_file\.trusted/);
  });

  it("checks the mcp identity's grants and names them by the mcp section", async () => {
    const r = await validate(`mcp:
  tools: [calculate, calculat]
listeners:
  - name: solo
    agent: true
    description: alone
`);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/mcp\.tools\[1\]: unknown tool "calculat"/);
    expect(r.err).not.toContain('listeners[1]');
  });

  it('refuses env values given directly instead of through *_env names', async () => {
    const r = await validate(`mcp_servers:
  - name: gh
    command: /bin/true
    env: { GITHUB_TOKEN: ghp_literal_secret }
`);
    expect(r.code).toBe(1);
    expect(r.err).toContain('mcp_servers[0].env');
  });

  // The rule that stops such a server at its start (test/attacks/mcp-sandbox.test.ts), told before.
  it('names a stdio server whose workspace is the data dir or a folder of it, with the line', async () => {
    const yaml = `mcp_servers:
  - name: fine
    command: /bin/true
    workspace: ./data/mcp/fine-elsewhere
  - name: outside
    command: /bin/true
    workspace: ./server-space
  - name: far
    url: http://127.0.0.1:1/mcp
  - name: peek
    command: /bin/true
    workspace: ./data
  - name: stores
    command: /bin/true
    workspace: ./data/kv
  - name: shared
    command: /bin/true
    workspace: ./data/mcp
listeners:
  - name: solo
    agent: true
    description: alone
`;
    const o = await tempOrganism(yaml);
    const io = captureIo();
    const code = await main(['validate', o.config], io);
    const err = io.stderr.join('\n');
    expect(code).toBe(1);
    const lines = err.split('\n').filter((l) => l.includes('workspace'));
    expect(lines).toHaveLength(3);
    // Line 17: tempOrganism writes five organism: lines before these.
    expect(lines[0]).toBe(
      `${o.config}:17:16: mcp_servers[3].workspace: MCP server 'peek': its workspace ${o.dataDir} is the daemon's data dir or a folder in it (mcp_servers peek.workspace; data dir ${o.dataDir}): the server would see the audit log, keys and stores there. Give it a folder of its own outside the data dir, or leave workspace unset (${o.dataDir}/mcp/peek)`,
    );
    expect(lines[1]).toContain(
      `mcp_servers[4].workspace: MCP server 'stores': its workspace ${o.dataDir}/kv is`,
    );
    expect(lines[2]).toContain(
      `mcp_servers[5].workspace: MCP server 'shared': its workspace ${o.dataDir}/mcp is`,
    );
    expect(err).toContain('3 problems found');
  });

  it('says ok for stdio workspaces outside the data dir or under its mcp/ folder', async () => {
    const r = await validate(`mcp_servers:
  - name: own
    command: /bin/true
  - name: sub
    command: /bin/true
    workspace: ./data/mcp/sub
  - name: outside
    command: /bin/true
    workspace: ./server-space
listeners:
  - name: solo
    agent: true
    description: alone
`);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
  });

  // Where a user reads about the two workspace keys (the README reference renders these), both refusals are told.
  it('the schema describes both workspace refusals', () => {
    const props = (schema: unknown) => (schema as JsonSchema).properties as Record<string, JsonSchema>;
    const organism = props(organismSchema).organism;
    const servers = props(organismSchema).mcp_servers as JsonSchema;
    const described = [props(organism).workspace, props(servers.items).workspace].map((s) =>
      String(s?.description),
    );
    expect(described[0]).toMatch(
      /Not data_dir or a folder in it other than its workspace\/.*\(refused at load\)/,
    );
    expect(described[1]).toMatch(
      /Not data_dir or a folder in it other than one under its mcp\/ \(the server does not start/,
    );
  });
});
