/**
 * Before each test file. A worker runs its files in one module graph (vitest.config.ts), so what
 * the runtime keeps per process outlives the file that filled it; here it is put back to what a
 * fresh daemon starts with. The secrets an earlier file's organism registered would otherwise
 * redact this file's values (a known `sk-live-abc…` turns a longer one into `[REDACTED]xyz…`).
 */
import { knownSecrets } from '../src/audit/redact.ts';

knownSecrets.clear();
