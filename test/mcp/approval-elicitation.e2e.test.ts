/**
 * Approval by elicitation on the real daemon (`organism run`, run_command in bubblewrap), called
 * over /mcp by the SDK's Client that declares elicitation: a listener's tool call under
 * `approval: always`, in the thread the client's call started, is put to the client's user with
 * the line `organism approvals list` prints. accept runs it and decline refuses it, each recorded
 * in the audit `by` the token and the client; cancel leaves it pending, and the API still decides
 * it; a caller whose role could not decide over the API (an operator where approval_role: admin),
 * or a listener with approval_elicitation: false, is not asked.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  type ElicitRequest,
  ElicitRequestSchema,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvalLine } from '../../src/tools/approval/view.ts';
import { listenerYaml, ranLines } from '../approval/helpers.ts';
import type { DaemonProcess } from '../helpers/daemon.ts';
import {
  ADMIN_TOKEN,
  AUTH_YAML,
  call,
  OPERATOR_TOKEN,
  organismDir,
  startOn,
  TOKENS_ENV,
} from '../server/helpers.ts';

type Params = ElicitRequest['params'];

const BY = 'ops via MCP client elicit-test 4.2';

async function connect(url: string, answer: (params: Params) => ElicitResult | Promise<ElicitResult>) {
  const client = new Client({ name: 'elicit-test', version: '4.2' }, { capabilities: { elicitation: {} } });
  const asked: Params[] = [];
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params);
    return answer(request.params);
  });
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } },
  });
  await client.connect(transport);
  return {
    client,
    asked,
    close: async () => {
      await transport.terminateSession().catch(() => {});
      await client.close();
    },
  };
}

/** toolbox (listeners/toolbox.ts) asked over MCP to run `command` with run_command. */
function useTool(client: Client, listener: string, command: string) {
  return client.callTool({
    name: listener,
    arguments: { tool: 'run_command', args: JSON.stringify({ command }) },
  });
}

/** The toolbox's `<tool-answer>` from the call's result. */
function toolAnswer(result: Awaited<ReturnType<Client['callTool']>>) {
  const reply = (result.structuredContent as { reply?: string }).reply ?? '';
  const field = (name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(reply)?.[1] ?? '';
  return {
    status: field('status'),
    result: field('result').replaceAll('&quot;', '"'),
    thread: (result.structuredContent as { thread: string }).thread,
  };
}

async function approvalRecords(url: string, thread: string): Promise<any[]> {
  const res = await call(url, `/api/v1/audit?type=approval&thread=${thread}`, { token: ADMIN_TOKEN });
  expect(res.status).toBe(200);
  return res.json.records as any[];
}

describe('approval by elicitation on the real daemon', () => {
  let daemon: DaemonProcess;
  let dir: string;

  beforeAll(async () => {
    const made = await organismDir('');
    dir = made.dir;
    const yaml = `organism:
  name: approval-elicitation
  workspace: ${join(dir, 'ws')}
${AUTH_YAML}mcp:
  tools: [run_command]
  trust: high
  tool_config:
    run_command: { shell: true, approval: always }
listeners:
${listenerYaml('toolbox', 'use-tool', 'approval: always')}    mcp: true
${listenerYaml('strict', 'use-tool-strict', 'approval: always, approval_role: admin')}    mcp: true
${listenerYaml('quiet', 'use-tool-quiet', 'approval: always, approval_elicitation: false')}    mcp: true
`;
    await writeFile(made.file, yaml);
    daemon = await startOn(made.file, TOKENS_ENV);
  });
  afterAll(async () => {
    await daemon?.stop();
  });

  it('accept: the call runs; the client was shown the line the CLI lists; the audit says who, through which client', async () => {
    const c = await connect(daemon.url, () => ({ action: 'accept', content: { reason: 'fine by me' } }));
    try {
      const result = await useTool(c.client, 'toolbox', 'echo accepted >> ran.txt');
      const answer = toolAnswer(result);
      expect(answer.status).toBe('ok');
      expect(await ranLines(dir)).toContain('accepted');
      expect(c.asked).toHaveLength(1);
      const records = await approvalRecords(daemon.url, answer.thread);
      expect(records).toEqual([
        expect.objectContaining({ decision: 'approved', by: BY, reason: 'fine by me', tool: 'run_command' }),
      ]);
      // The question is the line `organism approvals list` prints of the approval the API shows.
      const shown = await call(daemon.url, `/api/v1/approvals/${records[0].approval}`, {
        token: ADMIN_TOKEN,
      });
      expect(shown.json).toMatchObject({ state: 'approved', decided_by: BY });
      expect(c.asked[0]!.message).toBe(
        `A tool call waits for your approval (accept runs it, decline denies it):\n${approvalLine(shown.json)}`,
      );
      expect(c.asked[0]!.message).toContain('"command":"echo accepted >> ran.txt"');
    } finally {
      await c.close();
    }
  });

  it('a native tool called straight over MCP (the mcp identity) is asked about the same way', async () => {
    const c = await connect(daemon.url, () => ({ action: 'accept' }));
    try {
      const result = await c.client.callTool({
        name: 'run_command',
        arguments: { command: 'echo direct >> ran.txt' },
      });
      expect(result.isError).toBe(false);
      expect(await ranLines(dir)).toContain('direct');
      expect(c.asked).toHaveLength(1);
      expect(c.asked[0]!.message).toContain('run_command by mcp in thread');
      const res = await call(daemon.url, '/api/v1/audit?type=approval&listener=mcp', { token: ADMIN_TOKEN });
      expect(res.json.records).toEqual([
        expect.objectContaining({ decision: 'approved', by: BY, reason: 'approved in the MCP client' }),
      ]);
    } finally {
      await c.close();
    }
  });

  it('decline: the call is refused and does not run; the audit records the denial and who', async () => {
    const c = await connect(daemon.url, () => ({ action: 'decline' }));
    try {
      const answer = toolAnswer(await useTool(c.client, 'toolbox', 'echo declined >> ran.txt'));
      expect(answer.status).toBe('refused');
      expect(answer.result).toContain(`was denied by ${BY}: declined in the MCP client`);
      expect(await ranLines(dir)).not.toContain('declined');
      expect(await approvalRecords(daemon.url, answer.thread)).toEqual([
        expect.objectContaining({ decision: 'denied', by: BY, reason: 'declined in the MCP client' }),
      ]);
    } finally {
      await c.close();
    }
  });

  it('cancel: nothing is decided; the approval stays pending and the API approves it', async () => {
    const c = await connect(daemon.url, () => ({ action: 'cancel' }));
    try {
      const running = useTool(c.client, 'toolbox', 'echo cancelled-then-approved >> ran.txt');
      const approval = await firstPending(daemon.url);
      // The client answered cancel; still pending after that.
      await until(() => c.asked.length === 1);
      await new Promise((r) => setTimeout(r, 200));
      const still = await call(daemon.url, `/api/v1/approvals/${approval.id}`, { token: ADMIN_TOKEN });
      expect(still.json.state).toBe('pending');
      const decided = await call(daemon.url, `/api/v1/approvals/${approval.id}/approve`, {
        token: ADMIN_TOKEN,
        body: {},
      });
      expect(decided.status).toBe(200);
      const answer = toolAnswer(await running);
      expect(answer.status).toBe('ok');
      expect(await ranLines(dir)).toContain('cancelled-then-approved');
      expect(await approvalRecords(daemon.url, answer.thread)).toEqual([
        expect.objectContaining({ decision: 'approved', by: 'root' }),
      ]);
    } finally {
      await c.close();
    }
  });

  it('not asked: an operator caller where approval_role is admin, or a listener with approval_elicitation: false; the API decides both', async () => {
    const c = await connect(daemon.url, () => ({ action: 'accept' }));
    try {
      for (const listener of ['strict', 'quiet']) {
        const running = useTool(c.client, listener, `echo ${listener} >> ran.txt`);
        const approval = await firstPending(daemon.url);
        expect(approval.listener).toBe(listener);
        await new Promise((r) => setTimeout(r, 300));
        expect(c.asked).toEqual([]);
        const denied = await call(daemon.url, `/api/v1/approvals/${approval.id}/deny`, {
          token: ADMIN_TOKEN,
          body: { reason: 'not now' },
        });
        expect(denied.status).toBe(200);
        expect(toolAnswer(await running).status).toBe('refused');
      }
      expect(await ranLines(dir)).not.toContain('strict');
      expect(await ranLines(dir)).not.toContain('quiet');
    } finally {
      await c.close();
    }
  });
});

async function firstPending(url: string): Promise<any> {
  let found: any;
  await until(async () => {
    const res = await call(url, '/api/v1/approvals', { token: ADMIN_TOKEN });
    found = (res.json.approvals as any[])[0];
    return found !== undefined;
  });
  return found;
}

async function until(probe: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}
