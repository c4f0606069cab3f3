/**
 * Starts the daemon's HTTP server in a process of its own (nothing else has touched its globals),
 * then prints whether a response from fetch() is still an `instanceof Response`.
 */
import pino from 'pino';
import { Authenticator } from '../../../src/server/auth.ts';
import { startHttpServer } from '../../../src/server/http.ts';
import { RateLimiter } from '../../../src/server/rate-limit.ts';
import type { OrganismService } from '../../../src/server/service.ts';

const service = {
  events: { subscribe: () => () => {} },
  info: () => ({ name: 'probe' }),
} as unknown as OrganismService;
const auth = Authenticator.fromConfig(undefined, {});
const server = await startHttpServer(service, {
  host: '127.0.0.1',
  port: 0,
  maxBodyBytes: 1 << 20,
  logger: pino({ level: 'silent' }),
  auth: () => auth,
  injectLimiter: () => new RateLimiter({ perSecond: 10, burst: 10 }),
});
const response = await fetch(`${server.url}/healthz`);
process.stdout.write(JSON.stringify({ status: response.status, instance: response instanceof Response }));
await server.close();
