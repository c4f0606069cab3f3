/**
 * `organism mcp`: the running daemon's /mcp on standard input and output, for desktop clients that
 * start a program and talk MCP over its stdio. Every JSON-RPC message is relayed unchanged both
 * ways (the daemon's requests to the client too: sampling, elicitation), over one MCP session of
 * the daemon that ends when standard input does, so the daemon is the one organism and its token's
 * role applies: a request the daemon
 * refuses (401, 403) is answered to the client as a JSON-RPC error with the daemon's reason.
 */
import type { Readable, Writable } from 'node:stream';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

export interface BridgeOptions {
  url: string;
  token: string | undefined;
  stdin?: Readable;
  stdout?: Writable;
  /** One line per problem; stdout belongs to the protocol. */
  log(message: string): void;
}

/** Relays until standard input ends or the daemon's side closes; resolves then. */
export async function runBridge(options: BridgeOptions): Promise<void> {
  const endpoint = new URL('/mcp', options.url);
  const headers: Record<string, string> = options.token ? { authorization: `Bearer ${options.token}` } : {};
  const local = new StdioServerTransport(options.stdin, options.stdout);
  const remote = new StreamableHTTPClientTransport(endpoint, { requestInit: { headers } });
  let closed = false;
  const done = new Promise<void>((resolve) => {
    const close = () => {
      if (closed) return;
      closed = true;
      void local.close();
      // The desktop client is done: its session on the daemon ends now, not at the idle time.
      void remote
        .terminateSession()
        .catch(() => {})
        .finally(() => remote.close())
        .finally(resolve);
    };
    local.onclose = close;
    remote.onclose = close;
    options.stdin?.once('end', close);
    if (!options.stdin) process.stdin.once('end', close);
  });
  remote.onmessage = (message) => {
    void local
      .send(message)
      .catch((error: unknown) => options.log(`cannot write to stdout: ${String(error)}`));
  };
  remote.onerror = (error) => options.log(`daemon: ${error.message}`);
  local.onerror = (error) => options.log(`stdin: ${error.message}`);
  local.onmessage = (message: JSONRPCMessage) => {
    remote.send(message).catch((error: unknown) => {
      const id = (message as { id?: string | number }).id;
      const said = (error as Error).message ?? String(error);
      // "fetch failed" alone does not say where: name the daemon's endpoint.
      const text = /fetch failed|ECONNREFUSED/.test(said)
        ? `cannot reach the daemon at ${endpoint.href}: ${said}`
        : said;
      options.log(`daemon refused a message: ${text}`);
      if (id === undefined) return;
      void local.send({ jsonrpc: '2.0', id, error: { code: -32001, message: text } });
    });
  };
  await remote.start();
  await local.start();
  return done;
}
