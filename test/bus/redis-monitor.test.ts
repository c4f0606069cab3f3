/**
 * The MONITOR helper (redis-monitor.ts) against a stand-in server that answers MONITOR the way a
 * busy Redis can: its OK and the first monitor lines in one write. ioredis's own monitor() took
 * those lines for replies nobody asked for, rejected with "Command queue state error" and threw
 * the next one from the socket's data handler: redis-plain-read failed so beside the full suite.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { until } from '../../src/testing/index.ts';
import { monitorCommands } from './redis-monitor.ts';

const line = (n: number, command: string) => `+1700000000.00000${n} [0 127.0.0.1:1] "${command}" "k"\r\n`;

let server: Server | undefined;
afterEach(() => {
  server?.close();
});

/** Answers every command OK (INFO with a version), MONITOR with OK and two lines in one write. */
async function busyRedis(): Promise<{ port: number; monitoring: Promise<Socket> }> {
  let monitoring!: (socket: Socket) => void;
  const monitored = new Promise<Socket>((resolve) => {
    monitoring = resolve;
  });
  server = createServer((socket) => {
    socket.on('data', (data) => {
      for (const [, name] of data.toString().matchAll(/\*\d+\r\n\$\d+\r\n([a-zA-Z]+)/g)) {
        const command = name!.toLowerCase();
        if (command === 'monitor') {
          socket.write(`+OK\r\n${line(1, 'subscribe')}${line(2, 'get')}`);
          monitoring(socket);
        } else if (command === 'info') {
          socket.write('$31\r\n# Server\r\nredis_version:7.0.0\r\n\r\n');
        } else {
          socket.write('+OK\r\n');
        }
      }
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return { port: typeof address === 'object' && address ? address.port : 0, monitoring: monitored };
}

describe('monitorCommands', () => {
  it("lets go the lines that came with MONITOR's OK and reports every line after it", async () => {
    const { port, monitoring } = await busyRedis();
    const client = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 1 });
    const seen: string[] = [];
    const monitor = await monitorCommands(client, (args) => seen.push(args[0]!));
    try {
      (await monitoring).write(line(3, 'set'));
      await until(() => seen.length > 0, 'the line sent after MONITOR');
      expect(seen).toEqual(['set']);
    } finally {
      monitor.stop();
      client.disconnect();
    }
  });
});
