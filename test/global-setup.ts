/**
 * The suite needs a real redis-server on 127.0.0.1:6379 (the kv store, the Redis transport, the
 * scale-out tests). CI starts one (.ci/run); on a developer's machine `npm test` starts its own when
 * none answers there, and stops it afterwards. What it cannot do is install one: then it says how.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { connect } from 'node:net';

const HOST = '127.0.0.1';
const PORT = 6379;

function answers(): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: HOST, port: PORT });
    socket.setTimeout(500);
    socket.once('connect', () => {
      socket.end('PING\r\n');
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

let server: ChildProcess | undefined;

export async function setup(): Promise<void> {
  if (await answers()) return;
  server = spawn(
    'redis-server',
    ['--port', String(PORT), '--bind', HOST, '--save', '', '--appendonly', 'no'],
    {
      stdio: 'ignore',
    },
  );
  const failed = new Promise<never>((_, reject) =>
    server!.once('error', (error) =>
      reject(
        new Error(
          `the tests need redis-server on 127.0.0.1:${PORT} and none is running or installed (${error.message}); ` +
            'install it (Debian: apt-get install redis-server) and run npm test again',
        ),
      ),
    ),
  );
  const deadline = Date.now() + 10_000;
  const up = (async () => {
    while (Date.now() < deadline) {
      if (await answers()) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`redis-server started but did not answer on 127.0.0.1:${PORT} within 10 s`);
  })();
  await Promise.race([up, failed]);
}

export async function teardown(): Promise<void> {
  server?.kill('SIGTERM');
}
