/** What the approval tests share: an organism with run_command under approval, and readers of its API. */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import { AUTH_YAML, call, LISTENERS, until } from '../server/helpers.ts';

export const TOOLBOX = join(LISTENERS, 'toolbox.ts');

/** A toolbox listener granted run_command under `extra` approval settings. */
export function listenerYaml(name: string, tag: string, extra: string): string {
  return `  - name: ${name}
    handler: ${TOOLBOX}
    payload: ${tag}
    trust: high
    timeout_ms: 900000
    tools: [run_command]
    tool_config:
      run_command: { shell: true, ${extra} }
`;
}

export function organismYaml(dir: string, auth: boolean): string {
  return `organism:
  name: approval-test
  workspace: ${dir}/ws
${auth ? AUTH_YAML : ''}listeners:
${listenerYaml('toolbox', 'use-tool', 'approval: always')}${listenerYaml('strict', 'use-tool-strict', 'approval: always, approval_role: admin')}${listenerYaml('hasty', 'use-tool-hasty', 'approval: always, approval_timeout_ms: 1000')}${listenerYaml('careful', 'use-tool-careful', 'approval: destructive')}`;
}

const xmlText = (text: string) =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

export async function inject(url: string, tag: string, command: string, token?: string): Promise<string> {
  const payload = `<${tag}><tool>run_command</tool><args>${xmlText(JSON.stringify({ command }))}</args></${tag}>`;
  const res = await call(url, '/api/v1/inject', { token, body: { payload } });
  expect(res.status).toBe(202);
  return res.json.thread as string;
}

export async function messages(url: string, thread: string, token?: string): Promise<any[]> {
  const res = await call(url, `/api/v1/threads/${thread}`, { token });
  return res.status === 200 ? (res.json.messages as any[]) : [];
}

/** The listener's answer to the injection: its <status> and <result> (JSON, unescaped). */
export async function answer(
  url: string,
  thread: string,
  token?: string,
): Promise<{ status: string; result: any }> {
  const found = await until(async () => {
    const got = (await messages(url, thread, token)).find((m) => m.payload.startsWith('<tool-answer>'));
    return got ?? undefined;
  }, 60_000);
  const status = /<status>([^<]*)<\/status>/.exec(found.payload)![1]!;
  const raw = /<result>([^<]*)<\/result>/.exec(found.payload)![1]!;
  const unescaped = raw
    .replaceAll('&quot;', '"')
    .replaceAll('&apos;', "'")
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&');
  return { status, result: JSON.parse(unescaped) };
}

/** The approval waiting in `thread`, as GET /api/v1/approvals lists it. */
export async function pending(url: string, thread: string, token?: string): Promise<any> {
  return until(async () => {
    const res = await call(url, '/api/v1/approvals', { token });
    expect(res.status).toBe(200);
    return (res.json.approvals as any[]).find((a) => a.thread === thread);
  }, 30_000);
}

export const ranLines = async (dir: string) =>
  (await readFile(join(dir, 'ws', 'ran.txt'), 'utf8').catch(() => '')).split('\n').filter(Boolean);
