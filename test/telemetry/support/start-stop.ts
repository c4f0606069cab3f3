/**
 * Starts the daemon on the organism.yaml given as argument, stops it, and exits. The resolve hook
 * sees imports only: the @opentelemetry modules a CommonJS package required (prom-client's default
 * metrics did) are appended to OTEL_IMPORTS_FILE from the require cache here.
 */
import { appendFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { startDaemon } from '../../../src/daemon.ts';

const daemon = await startDaemon({ configPath: process.argv[2]!, port: 0, reloadOnSighup: false });
await daemon.close(100);
const required = Object.keys(createRequire(import.meta.url).cache).filter((f) =>
  f.includes('/node_modules/@opentelemetry/'),
);
if (required.length > 0)
  appendFileSync(process.env.OTEL_IMPORTS_FILE!, required.map((f) => `${f}\n`).join(''));
process.exit(0);
