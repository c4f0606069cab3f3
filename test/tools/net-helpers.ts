/** Real HTTP servers on loopback for the fetch_url / webhook / web_search tests. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  /** The local address the connection arrived on (which of several loopback addresses was dialled). */
  localAddress: string;
}

export interface TestServer {
  server: Server;
  port: number;
  /** `http://127.0.0.1:<port>` (or the host given). */
  url: string;
  requests: SeenRequest[];
  close(): Promise<void>;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => unknown;

/** A real node:http server on `host` (127.0.0.1 by default), port 0 unless given; records each request. */
export async function startServer(handler: Handler, host = '127.0.0.1', port = 0): Promise<TestServer> {
  const requests: SeenRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body,
        localAddress: req.socket.localAddress ?? '',
      });
      Promise.resolve(handler(req, res, body)).catch((error) => {
        res.statusCode = 500;
        res.end(String(error));
      });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const actual = (server.address() as AddressInfo).port;
  return {
    server,
    port: actual,
    url: `http://${host}:${actual}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A port that was just free: listen on 0, read the port, close. Nothing listens there afterwards. */
export async function closedPort(): Promise<number> {
  const s = await startServer(() => {});
  await s.close();
  return s.port;
}

/**
 * `startServer` for one test file: every server it starts is closed after each test. Call it once
 * at the top of the file.
 */
export function serverPerTest(): typeof startServer {
  let servers: TestServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.map((s) => s.close()));
    servers = [];
  });
  return async (...args) => {
    const s = await startServer(...args);
    servers.push(s);
    return s;
  };
}
