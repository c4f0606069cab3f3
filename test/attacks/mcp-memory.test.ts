/**
 * Memory an MCP client makes the daemon keep (issue 27), with the real daemon (`organism run`)
 * and real HTTP on 127.0.0.1: what a session was sent is kept for a client that reconnects
 * (Last-Event-ID), so it must be bounded in bytes, not only in count (mcp.replay_bytes). A viewer,
 * who may only read, asks one session 120 times for a resource whose 900 kB URI names nothing:
 * each answer is an error of 1.8 MB (the URI twice). With the bound taken away (replay_bytes set
 * to 1 GB) 300 such answers made the daemon keep 550 MB more; here 100 of them must make it keep
 * less than 60 MB more. Subscriptions are client text kept as long as the session: 150 URIs of
 * 900 kB each grew the daemon by 140 MB before a URI to watch was bounded (4,096 characters).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DaemonProcess, startDaemonProcess } from '../helpers/daemon.ts';
import { OPERATOR_TOKEN, REPO, tempOrganism, VIEWER_TOKEN } from '../mcp/helpers.ts';

let daemon: DaemonProcess;
let mcp: string;

beforeAll(async () => {
  const organism = await tempOrganism(`auth:
  tokens:
    - { name: ops, role: operator, token_env: MCP_OPS_TOKEN }
    - { name: watcher, role: viewer, token_env: MCP_VIEW_TOKEN }
listeners:
  - name: upper
    handler: ${JSON.stringify(`${REPO}test/mcp/fixtures/upper.ts`)}
    mcp: true
`);
  daemon = await startDaemonProcess(['--config', organism.config], {
    MCP_OPS_TOKEN: OPERATOR_TOKEN,
    MCP_VIEW_TOKEN: VIEWER_TOKEN,
  });
  mcp = `${daemon.url}/mcp`;
}, 30_000);
afterAll(async () => {
  await daemon?.stop();
});

function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

function headers(extra: Record<string, string> = {}): Record<string, string> {
  return {
    authorization: `Bearer ${VIEWER_TOKEN}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2025-11-25',
    ...extra,
  };
}

/** A viewer's session, opened with a raw initialize (the attack needs no client library). */
async function openSession(): Promise<string> {
  const init = await fetch(mcp, {
    method: 'POST',
    headers: headers(),
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    }),
  });
  await init.text();
  return init.headers.get('mcp-session-id')!;
}

/** One request on `session`; the answer's text. */
async function rpc(session: string, id: number, method: string, params: unknown): Promise<string> {
  const r = await fetch(mcp, {
    method: 'POST',
    headers: headers({ 'mcp-session-id': session }),
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
  });
  return r.text();
}

describe('MCP memory attacks', () => {
  it("a viewer's 100 answers of 1.8 MB on one session are not all kept for its replay", async () => {
    const session = await openSession();
    const big = 'x'.repeat(900_000);
    // A different URI each time: no two answers share their text.
    const read = (id: number) =>
      rpc(session, id, 'resources/read', { uri: `organism://nothing/${id}/${big}` });
    const first = await read(1);
    expect(first).toContain('Resource not found');
    expect(first.length).toBeGreaterThan(1_800_000);
    for (let i = 2; i <= 10; i++) await read(i);
    const before = rssBytes(daemon.child.pid!);
    for (let i = 11; i <= 110; i++) await read(i);
    const after = rssBytes(daemon.child.pid!);
    expect(after - before, `the daemon's RSS grew by ${after - before} bytes`).toBeLessThan(60 * 1024 * 1024);
    // The session still answers, and ends when asked.
    expect(await read(111)).toContain('Resource not found');
    const end = await fetch(mcp, { method: 'DELETE', headers: headers({ 'mcp-session-id': session }) });
    expect(end.status).toBe(200);
  }, 120_000);

  it('a viewer subscribing one session to 150 resource URIs of 900 kB each does not make the daemon keep them', async () => {
    const session = await openSession();
    const big = 'y'.repeat(900_000);
    const subscribe = (id: number) =>
      rpc(session, id, 'resources/subscribe', { uri: `notes://n/${id}/${big}` });
    for (let i = 1; i <= 10; i++) await subscribe(i);
    const before = rssBytes(daemon.child.pid!);
    const answers: string[] = [];
    for (let i = 11; i <= 160; i++) answers.push((await subscribe(i)).slice(0, 300));
    const after = rssBytes(daemon.child.pid!);
    expect(
      after - before,
      `the daemon's RSS grew by ${after - before} bytes; ${answers.at(-1)}`,
    ).toBeLessThan(60 * 1024 * 1024);
    const end = await fetch(mcp, { method: 'DELETE', headers: headers({ 'mcp-session-id': session }) });
    expect(end.status).toBe(200);
  }, 120_000);
});
