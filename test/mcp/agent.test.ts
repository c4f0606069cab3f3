/**
 * An agent using an MCP tool: the model is offered `rug__greet` (function names allow no dot), the
 * call reaches `rug.greet` through the dispatcher, and the result comes back framed as external.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { agentFunctions } from '../../src/agent/definition.ts';
import { frameToolResult } from '../../src/agent/frame.ts';
import { type Daemon, startDaemon } from '../../src/daemon.ts';
import { modelToolName } from '../../src/mcp/names.ts';
import { RUG, tempOrganism, until } from './helpers.ts';

let daemon: Daemon | undefined;
afterAll(async () => {
  await daemon?.close(100);
});

describe('agents and MCP tools', () => {
  it('maps names for function calling: dots and other characters, and long names kept apart', () => {
    expect(modelToolName('calculate')).toBe('calculate');
    expect(modelToolName('fs.read_file')).toBe('fs__read_file');
    expect(modelToolName('every.get.thing')).toBe('every__get_thing');
    const long = `srv.${'x'.repeat(100)}`;
    const other = `srv.${'x'.repeat(99)}y`;
    expect(modelToolName(long)).toMatch(/^[a-zA-Z0-9_-]{64}$/);
    expect(modelToolName(long)).not.toBe(modelToolName(other));
    const functions = agentFunctions({ name: 'a', tools: ['rug.greet'], peers: [] } as never, {
      tools: () => ({ description: 'Greets.', args: { type: 'object' }, source: 'external' }),
      peers: () => undefined,
    });
    expect(functions[0]).toMatchObject({ name: 'rug__greet', target: 'rug.greet', source: 'external' });
    const framed = frameToolResult(
      'c1',
      'rug__greet',
      { status: 'ok', tool: 'rug.greet', value: { text: 'hi' } },
      'external',
      10_000,
    );
    expect(JSON.stringify(framed)).toContain('source=\\"external\\"');
  });

  it('an agent calls an MCP tool through the dispatcher under its model-facing name', async () => {
    const o = await tempOrganism(`mcp_servers:
  - name: rug
    command: /usr/bin/node
    args: [${JSON.stringify(RUG)}]
    capabilities: { greet: read }
llm:
  backends:
    - { provider: scripted, script: ./script.yaml }
listeners:
  - name: helper
    agent: true
    description: greets people with the rug server
    tools: [rug.greet]
`);
    await writeFile(
      join(o.dir, 'script.yaml'),
      `name: mcp-demo
scripts:
  - turns:
      - tool_calls:
          - name: rug__greet
            args: { name: ada }
      - text: "{{result.text}}"
`,
    );
    daemon = await startDaemon({ configPath: o.config, port: 0, host: '127.0.0.1', reloadOnSighup: false });
    const { thread } = await daemon.bus.inject({
      to: 'helper',
      payload: '<helper><task>greet ada</task></helper>',
    });
    await until(
      () => (daemon!.bus.thread(thread)?.messages ?? []).some((m) => m.payload.startsWith('<answer>')),
      'the answer',
    );
    const messages = daemon.bus.thread(thread)!.messages;
    const call = messages.find((m) => m.kind === 'tool-call');
    expect(call?.to).toBe('rug.greet');
    expect(messages.find((m) => m.payload.startsWith('<answer>'))?.payload).toContain(
      '<text>hello ada</text>',
    );
  });
});
